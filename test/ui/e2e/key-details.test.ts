import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { chromiumAvailable } from '../../support/browser.js';
import { focused } from '../../support/ui/focus.js';
import { closeUi, DESKTOP, expectNoSeriousA11yViolations, openUi, PHONE, shots, signIn } from '../../support/ui/page.js';
import { sendWith, templateBody } from '../../support/ui/seed.js';
import { seedAcmeWithRelay, startUiServer, type UiServer } from '../../support/ui/server.js';

/**
 * Issue 29's keys in the operator UI: each key's name (or "No name"), scope, last use ("never",
 * or relative over the exact time) and maker; the New key form with a name and, for private keys
 * only, the scope in plain words; renaming from the list (focus in, Escape out). Checked with axe,
 * shot at desktop and phone sizes, and with no sideways scrolling at 390 px.
 */
const USED_KEY = 'sk_key_details_e2e_0123456789';

interface KeyView {
  id: string;
  name: string | null;
  scope: string;
  type: string;
  last_used_at: string | null;
  created_by: string | null;
}

describe.skipIf(!chromiumAvailable('the key details E2E test'))('operator UI: key names, scopes, last use', () => {
  let ui: UiServer;
  let page: Page;
  let usedId = '';
  const go = (hash: string) => page.goto(`${ui.baseUrl}/ui/${hash}`);
  const keys = async () => ((await ui.admin('GET', '/organizations/acme/keys')).body as { items: KeyView[] }).items;
  const table = () => page.getByRole('table', { name: 'Keys' });
  const rowOf = (id: string) => table().locator('tbody tr', { hasText: id });

  beforeAll(async () => {
    ui = await startUiServer({ smtp: true });
    await seedAcmeWithRelay(ui);
    const made = await ui.admin('POST', '/organizations/acme/keys', { type: 'private', key: USED_KEY, name: 'Billing server' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    usedId = (made.body as KeyView).id;
    const never = await ui.admin('POST', '/organizations/acme/keys', { type: 'public' });
    expect(never.status).toBe(201);
    const t = await ui.admin('PUT', '/organizations/acme/templates/order', templateBody('ada@example.com', 'Your order'));
    expect(t.status, JSON.stringify(t.body)).toBe(201);
    await sendWith(ui, USED_KEY, 'order');
    // Written off the request's path: wait until the admin API shows it.
    await vi.waitFor(async () => expect((await keys()).find((k) => k.id === usedId)?.last_used_at).not.toBeNull(), {
      timeout: 20_000,
      interval: 100,
    });
    page = await openUi(ui.baseUrl, { cleanup: ui.cleanup, viewport: DESKTOP });
    await signIn(page, ui.baseUrl, ui.token);
  }, 90_000);

  afterAll(async () => {
    if (page !== undefined) await closeUi(page);
    await ui?.stop();
  });

  it('lists each key with its name, scope, last use and maker', async () => {
    await go('#/orgs/acme/keys');
    const used = rowOf(usedId);
    await used.waitFor();
    expect(await used.getByText('Billing server').count()).toBe(1);
    expect(await used.locator('td[data-label="Scope"]').textContent()).toBe('Full access');
    const last = used.locator('td[data-label="Last used"]');
    expect(await last.locator('time').textContent()).toMatch(/^(within the last minute|\d+ min ago)$/);
    expect(await last.locator('small').textContent()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(await used.locator('td[data-label="Created"]').textContent()).toContain('by admin API or UI');
    const unused = table().locator('tbody tr', { hasText: 'public' });
    expect(await unused.locator('td[data-label="Last used"]').textContent()).toBe('never');
    expect(await unused.getByText('No name').count()).toBe(1);
  });

  it('creates a named send-only key; the scope is offered for private keys only', async () => {
    await go('#/orgs/acme/keys');
    const form = page.getByRole('form', { name: 'Create a key' });
    await form.getByLabel('Type').selectOption('public');
    expect(await form.getByLabel('Scope').count()).toBe(0);
    await form.getByLabel('Type').selectOption('private');
    const scope = form.getByLabel('Scope');
    expect(await scope.locator('option').allTextContents()).toEqual([
      'Full access',
      'Send only (cannot read history or messages)',
    ]);
    await form.getByLabel('Name').fill('  Nightly job ');
    await scope.selectOption('send_only');
    await page.getByText('A send-only key sends mail').waitFor();
    await form.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('it will not be shown again').waitFor();
    const made = (await keys()).find((k) => k.name === 'Nightly job');
    expect(made).toMatchObject({ type: 'private', scope: 'send_only', created_by: 'admin', last_used_at: null });
    const row = rowOf(made?.id ?? '?');
    await row.waitFor();
    expect(await row.locator('td[data-label="Scope"]').textContent()).toBe('Send only');
    // All ten columns fit 1440 px: the table does not scroll sideways (the actions wrap instead).
    const overflow = await page.evaluate(
      "(() => { const w = document.querySelector('main .keys-table .table-wrap'); return w.scrollWidth - w.clientWidth; })()",
    );
    expect(overflow).toBeLessThanOrEqual(1);
    await shots(page, 'keys-details');
    await expectNoSeriousA11yViolations(page);
    await page.getByRole('button', { name: 'I have copied it' }).click();
  });

  it('renames a key from the list: focus moves into the form, Escape closes it, Save renames', async () => {
    await go('#/orgs/acme/keys');
    const open = page.getByRole('button', { name: `Rename key ${usedId}` });
    await open.click();
    const form = page.getByRole('form', { name: `Rename key ${usedId}` });
    const field = form.getByLabel('Name');
    await vi.waitFor(async () => expect(await focused(page)).toMatchObject({ role: 'textbox', name: 'Name', region: 'main' }));
    expect(await field.inputValue()).toBe('Billing server');
    await page.keyboard.press('Escape');
    await form.waitFor({ state: 'detached' });
    expect(await focused(page)).toMatchObject({ role: 'button', name: `Rename key ${usedId}` });

    await open.click();
    await field.fill('Billing API');
    await shots(page, 'keys-rename');
    await expectNoSeriousA11yViolations(page);
    await form.getByRole('button', { name: 'Save name' }).click();
    await form.waitFor({ state: 'detached' });
    await rowOf(usedId).getByText('Billing API').waitFor();
    expect((await keys()).find((k) => k.id === usedId)?.name).toBe('Billing API');
  });

  it('fits a phone: no sideways scrolling at 390 px', async () => {
    await page.setViewportSize(PHONE);
    try {
      await go('#/orgs/acme/keys');
      await rowOf(usedId).waitFor();
      const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      expect(width).toBeLessThanOrEqual(PHONE.width);
      await page.getByRole('button', { name: `Rename key ${usedId}` }).click();
      expect((await page.evaluate('document.documentElement.scrollWidth')) as number).toBeLessThanOrEqual(PHONE.width);
      await expectNoSeriousA11yViolations(page);
    } finally {
      await page.setViewportSize(DESKTOP);
    }
  });
});
