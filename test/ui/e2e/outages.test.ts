import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { chromiumAvailable } from '../../support/browser.js';
import { smtpError } from '../../support/smtp-sink.js';
import { closeUi, DESKTOP, expectNoSeriousA11yViolations, openUi, shots, signIn } from '../../support/ui/page.js';
import { sendWith, templateBody } from '../../support/ui/seed.js';
import { seedAcmeWithRelay, startUiServer, type UiServer } from '../../support/ui/server.js';

/**
 * Issue 29 in the operator UI: a relay that answers every recipient "451 try again later" (an
 * outage). Its messages are `retrying` in the list and its filter, the overview names how many,
 * the oldest and its last error in full; the Test button says whether it tested the saved
 * settings or the form; the delete dialog names the waiting messages and moves them to another
 * service before deleting; an organization's list fields show the server's problems in words,
 * by line. Each screen is checked with axe and shot at desktop and phone sizes.
 */
const KEY = 'sk_outages_e2e_0123456789';
const OUTAGE = '4.7.1 Service temporarily unavailable, try again later';

describe.skipIf(!chromiumAvailable('the outages E2E test'))('operator UI: outages, service delete and test, field errors', () => {
  let ui: UiServer;
  let page: Page;
  const ids: string[] = [];
  const go = (hash: string) => page.goto(`${ui.baseUrl}/ui/${hash}`);

  beforeAll(async () => {
    ui = await startUiServer({ smtp: { rcpt: () => smtpError(451, OUTAGE) } });
    await seedAcmeWithRelay(ui);
    expect((await ui.admin('POST', '/organizations/acme/keys', { type: 'private', key: KEY })).status).toBe(201);
    expect((await ui.admin('PUT', '/organizations/acme/services/spare', { provider: 'outbox', default: false })).status).toBe(
      201,
    );
    const template = await ui.admin(
      'PUT',
      '/organizations/acme/templates/order',
      templateBody('ada@example.com', 'Your order', {
        text: 'Hello, your order has shipped.',
        html: undefined,
        from_name: undefined,
        params: [],
      }),
    );
    expect(template.status, JSON.stringify(template.body)).toBe(201);
    for (let i = 0; i < 2; i++) ids.push((await sendWith(ui, KEY, 'order', {})).message_id);
    // Both deferred by the relay: retrying.
    await vi.waitFor(
      async () => {
        const page = await ui.admin('GET', '/organizations/acme/messages?status=retrying');
        expect((page.body as { items: unknown[] }).items).toHaveLength(2);
      },
      { timeout: 30_000, interval: 200 },
    );
    page = await openUi(ui.baseUrl, { cleanup: ui.cleanup, viewport: DESKTOP });
    await signIn(page, ui.baseUrl, ui.token);
  }, 120_000);

  afterAll(async () => {
    if (page !== undefined) await closeUi(page);
    await ui?.stop();
  });

  it('the overview names the retrying messages, the oldest and its last error in full', async () => {
    await go('#/orgs/acme');
    const card = page.locator('section', { has: page.getByRole('heading', { name: 'Retrying' }) });
    await card.getByText('2', { exact: true }).waitFor();
    await page.getByRole('heading', { name: 'Oldest retrying message' }).waitFor();
    expect(await page.locator('pre', { hasText: OUTAGE }).count()).toBe(1);
    // Exact: the services table's "message" link is labelled "Message <id>", and names the oldest
    // too whenever its deferral was the service's last error (the two deferrals' order is a race).
    expect(await page.getByRole('link', { name: ids[0] ?? '?', exact: true }).count()).toBe(1);
    await shots(page, 'outages-overview');
    await expectNoSeriousA11yViolations(page);
    await card.getByRole('link', { name: 'See retrying messages' }).click();
    await page.waitForURL(/status=retrying/);
  });

  it('the messages list flags them "retrying", and the filter lists them alone', async () => {
    await go('#/orgs/acme/messages?status=retrying');
    const rows = page.getByRole('table', { name: 'Messages, newest first' }).locator('tbody tr');
    await vi.waitFor(async () => expect(await rows.count()).toBe(2), { timeout: 10_000 });
    expect(await rows.locator('.badge', { hasText: 'retrying' }).count()).toBe(2);
    expect(await page.getByRole('checkbox', { name: 'retrying' }).isChecked()).toBe(true);
    await shots(page, 'outages-messages');
    await expectNoSeriousA11yViolations(page);
  });

  it('Test says whether it tested the saved settings or the form (unsaved)', async () => {
    await go('#/orgs/acme/services/relay');
    await page.getByRole('button', { name: 'Test', exact: true }).click();
    await page.getByText('Tested the saved settings.').waitFor();
    await page.getByText('Test passed').waitFor();
    await page.getByLabel('Default from address').fill('edited@example.com');
    await page.getByRole('button', { name: 'Test', exact: true }).click();
    await page.getByText('Tested the form (unsaved).').waitFor();
    await page.getByText('Test passed').waitFor();
    // Nothing was saved by the test.
    const stored = await ui.admin('GET', '/organizations/acme/services/relay');
    expect((stored.body as { from_email: string }).from_email).toBe('noreply@example.com');
    await shots(page, 'services-test-form');
    await expectNoSeriousA11yViolations(page);
  });

  it('the delete dialog names the waiting messages, moves them to another service and deletes', async () => {
    await go('#/orgs/acme/services/relay');
    await page.getByRole('button', { name: 'Delete…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete service relay?' });
    // What blocks the delete comes first, with no "0 held" part; then that it is the default.
    await dialog.getByText('2 messages are waiting for this service.').waitFor();
    expect(await dialog.locator('p').first().textContent()).toContain('2 messages are waiting for this service.');
    expect(await dialog.getByText(/held message/).count()).toBe(0);
    await dialog.getByText("This is the organization's default service").waitFor();
    expect(await dialog.getByLabel('Move them to').inputValue()).toBe('spare');
    await shots(page, 'services-delete-dialog');
    await expectNoSeriousA11yViolations(page);
    await dialog.getByRole('button', { name: 'Move 2 messages to spare and delete' }).click();
    await page.waitForURL(/#\/orgs\/acme\/services$/);
    expect((await ui.admin('GET', '/organizations/acme/services/relay')).status).toBe(404);
    for (const id of ids) {
      const m = await ui.admin('GET', `/organizations/acme/messages/${id}`);
      expect((m.body as { service_id: string }).service_id).toBe('spare');
    }
  });

  it("an organization's list fields show the server's problems in words, by line", async () => {
    await ui.admin('PUT', '/organizations/acme/services/relay', { provider: 'outbox', default: true });
    await go('#/orgs/acme/settings');
    await page.getByLabel('Link domains').fill('example.com\nnot a domain/path');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText(/^Line 2: is "not a domain\/path", not a domain name/).waitFor();
    await page.getByLabel('Link domains').fill('example.com');
    await page.getByLabel('Allowed origins').fill('shop.example.com\nhttps://shop.example.com/cart');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText(/^Line 2: must be a domain such as example\.com/).waitFor();
    // Ajv's own sentence is not shown anywhere, only what to fix.
    await page.getByText('Not saved: one setting needs fixing').waitFor();
    expect(await page.getByText('must match pattern').count()).toBe(0);
    await shots(page, 'outages-field-errors');
    await expectNoSeriousA11yViolations(page);
  });
});
