import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable } from '../../support/browser.js';
import { closeUi, DESKTOP, expectNoSeriousA11yViolations, openUi, shots, signIn } from '../../support/ui/page.js';
import { seedAcmeWithRelay, startUiServer, type UiServer } from '../../support/ui/server.js';

/**
 * Issue 29, the service form: DKIM in a section of its own apart from the connection, failover
 * as ordered pickers of the organization's other services, an existing service's provider
 * read-only (and refused by the API), and Sign out asking first while the service form or the
 * template editor holds unsaved edits.
 */
describe.skipIf(!chromiumAvailable('the service form E2E test'))('operator UI: the service form and the sign-out guard', () => {
  let ui: UiServer;
  let page: Page;

  beforeAll(async () => {
    ui = await startUiServer({ smtp: true });
    await seedAcmeWithRelay(ui, {
      service: {
        smtp: {
          host: '127.0.0.1',
          port: ui.smtp?.port,
          dkim: { domain_name: 'acme.example', key_selector: 's1', private_key: '-----BEGIN PRIVATE KEY-----abc' },
        },
      },
    });
    for (const id of ['backup', 'spare']) {
      const res = await ui.admin('PUT', `/organizations/acme/services/${id}`, { provider: 'outbox', default: false });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    const template = await ui.admin('PUT', '/organizations/acme/templates/welcome', {
      subject: 'Hi {{name}}',
      to: 'ada@example.org',
      from_email: '',
      service_id: null,
      html: '<p>Hello {{name}}</p>',
      text: 'Hello {{name}}',
      params: [{ name: 'name', type: 'string', required: true }],
      captcha: false,
      allow_dynamic_recipients: false,
      allow_attachments: false,
      strict_params: true,
      enforce_link_allowlist: false,
      frozen: false,
    });
    expect(template.status, JSON.stringify(template.body)).toBe(201);
    page = await openUi(ui.baseUrl, { cleanup: ui.cleanup, viewport: DESKTOP });
    page.setDefaultTimeout(10_000);
    await signIn(page, ui.baseUrl, ui.token);
  }, 60_000);

  afterAll(async () => {
    if (page !== undefined) await closeUi(page);
    await ui?.stop();
  });

  const openService = async (id: string) => {
    await page.goto(`${ui.baseUrl}/ui/#/orgs/acme/services/${id}`);
    await page.getByRole('heading', { name: `Service ${id}`, level: 1 }).waitFor();
  };
  const region = (name: string) => page.getByRole('region', { name, exact: true });
  const picker = (n: number) => page.getByRole('combobox', { name: `Failover service ${n}` });
  const optionsOf = async (n: number) =>
    (await picker(n).locator('option').allTextContents()).map((s) => s.trim()).filter((s) => s !== 'Pick a service');

  it('groups DKIM apart from the connection; the provider is read-only', async () => {
    await openService('relay');
    await region('Connection').getByLabel('Host (required)').waitFor();
    expect(await region('Connection').getByLabel(/DKIM/).count()).toBe(0);
    const dkim = region('DKIM signing');
    expect(await dkim.getByLabel('DKIM domain').inputValue()).toBe('acme.example');
    expect(await dkim.getByLabel('DKIM key selector').inputValue()).toBe('s1');
    expect(await dkim.getByLabel('DKIM private key').getAttribute('placeholder')).toBe('unchanged (write-only)');
    expect(await dkim.getByLabel('Host (required)').count()).toBe(0);

    const provider = page.getByRole('textbox', { name: 'Provider', exact: true });
    expect(await provider.inputValue()).toBe('smtp');
    expect(await provider.getAttribute('readonly')).not.toBeNull();
    const style = `getComputedStyle(document.querySelector('.service-form input[readonly]')).borderTopStyle`;
    expect(await page.evaluate(style)).toBe('dashed');
    expect(await page.getByRole('combobox', { name: 'Provider', exact: true }).count()).toBe(0);
    await shots(page, 'service-form-groups');
    await expectNoSeriousA11yViolations(page);

    // A new service still picks its provider.
    await page.goto(`${ui.baseUrl}/ui/#/orgs/acme/services/new`);
    await page.getByRole('heading', { name: 'New service', level: 1 }).waitFor();
    await page.getByRole('combobox', { name: 'Provider', exact: true }).waitFor();
  }, 60_000);

  it('failover is an ordered list of pickers of the other services, never itself, no duplicates', async () => {
    await openService('relay');
    const add = page.getByRole('button', { name: 'Add a failover service' });
    await add.click();
    expect(await optionsOf(1)).toEqual(['backup', 'spare']);
    await add.click();
    // Each picker offers what the others have not taken; the service itself is never offered.
    expect(await optionsOf(1)).toEqual(['backup']);
    expect(await optionsOf(2)).toEqual(['spare']);
    expect(await add.isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Move failover service 2 up' }).click();
    expect(await picker(1).inputValue()).toBe('spare');
    expect(await picker(2).inputValue()).toBe('backup');
    expect(await page.getByRole('button', { name: 'Move failover service 1 up' }).isDisabled()).toBe(true);
    await shots(page, 'service-form-failover', '.failover');
    await expectNoSeriousA11yViolations(page);
    await page.getByRole('button', { name: 'Save service' }).click();
    await page.getByText(/^Saved \(version/).waitFor();
    expect((await ui.admin('GET', '/organizations/acme/services/relay')).body).toMatchObject({ failover: ['spare', 'backup'] });

    await page.getByRole('button', { name: 'Remove failover service 1' }).click();
    expect(await picker(1).inputValue()).toBe('backup');
    expect(await picker(2).count()).toBe(0);
    await page.getByRole('button', { name: 'Save service' }).click();
    await expect
      .poll(async () => ((await ui.admin('GET', '/organizations/acme/services/relay')).body as { failover?: unknown }).failover)
      .toEqual(['backup']);

    // backup's own pickers offer relay and spare, never backup.
    await openService('backup');
    await page.getByRole('button', { name: 'Add a failover service' }).click();
    expect(await optionsOf(1)).toEqual(['relay', 'spare']);
    // Taken back: an unsaved picker would make the next page ask first (the form's leave guard).
    await page.getByRole('button', { name: 'Remove failover service 1' }).click();
  }, 60_000);

  it('the API refuses a change of provider, naming it', async () => {
    const res = await ui.admin('PATCH', '/organizations/acme/services/backup', { provider: 'smtp' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: 'invalid_body', details: { fields: [{ field: 'provider' }] } } });
  });

  const signOutDialog = () => page.getByRole('alertdialog', { name: 'Sign out without saving?' });
  const signOutButton = () => page.getByRole('button', { name: 'Sign out', exact: true });

  it('Sign out with unsaved service edits asks first: Stay (or Escape) keeps them, Sign out without saving goes', async () => {
    await openService('relay');
    await page.getByLabel('Default from name').fill('Changed name');
    await signOutButton().click();
    await signOutDialog().waitFor();
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Stay signed in');
    await shots(page, 'sign-out-guard');
    await expectNoSeriousA11yViolations(page);
    await signOutDialog().getByRole('button', { name: 'Stay signed in' }).click();
    await signOutDialog().waitFor({ state: 'hidden' });
    expect(await page.getByLabel('Default from name').inputValue()).toBe('Changed name');

    await signOutButton().click();
    await signOutDialog().waitFor();
    await page.keyboard.press('Escape');
    await signOutDialog().waitFor({ state: 'hidden' });
    expect(await page.getByLabel('Default from name').inputValue()).toBe('Changed name');

    await signOutButton().click();
    await signOutDialog().getByRole('button', { name: 'Sign out without saving' }).click();
    await page.getByLabel('Admin token').waitFor();
    expect((await ui.admin('GET', '/organizations/acme/services/relay')).body).toMatchObject({ from_name: 'Acme' });
    await signIn(page, ui.baseUrl, ui.token);
  }, 60_000);

  it('Sign out from a saved service form, or with unsaved template edits', async () => {
    // Nothing unsaved: signs out at once.
    await openService('relay');
    await signOutButton().click();
    await page.getByLabel('Admin token').waitFor();
    await signIn(page, ui.baseUrl, ui.token);

    await page.goto(`${ui.baseUrl}/ui/#/orgs/acme/templates/welcome`);
    await page.getByRole('heading', { name: 'Template welcome', level: 1 }).waitFor();
    await page.getByLabel('Subject').fill('Changed {{name}}');
    await signOutButton().click();
    await signOutDialog().waitFor();
    await signOutDialog().getByRole('button', { name: 'Stay signed in' }).click();
    await signOutDialog().waitFor({ state: 'hidden' });
    expect(await page.getByLabel('Subject').inputValue()).toBe('Changed {{name}}');
  }, 60_000);
});
