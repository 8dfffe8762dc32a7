import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orgBody } from '../../support/admin.js';
import { chromiumAvailable } from '../../support/browser.js';
import { closeUi, expectNoSeriousA11yViolations, openUi, shot, signIn } from '../../support/ui/page.js';
import { startUiServer, type UiServer } from '../../support/ui/server.js';

/**
 * Issue 25: an IDN address is stored by its A-label (`zoë@xn--exmple-cua.com`); the operator UI
 * shows it readably, `zoë@exämple.com`, with the stored form on hover, in the suppressions and
 * the block list alike. A link-domain entry that is no domain name is named beside its field.
 */
describe.skipIf(!chromiumAvailable('the operator UI IDN display'))('operator UI: IDN addresses and link domains', () => {
  let ui: UiServer;
  let page: Page;

  beforeAll(async () => {
    ui = await startUiServer({ worker: false });
    page = await openUi(ui.baseUrl, { cleanup: ui.cleanup });
    expect((await ui.admin('PUT', '/organizations/acme', orgBody({ name: 'Acme' }))).status).toBe(201);
    // Added in the Unicode form, stored (and answered) in the A-label form.
    const added = await ui.admin('POST', '/organizations/acme/suppressions', { email: 'Zoë@Exämple.com' });
    expect(added.body).toMatchObject({ email: 'zoë@xn--exmple-cua.com' });
    expect((await ui.admin('POST', '/organizations/acme/block-list', { value: '@xn--bcher-kva.de' })).status).toBe(201);
    await signIn(page, ui.baseUrl, ui.token);
  }, 60_000);

  afterAll(async () => {
    if (page !== undefined) await closeUi(page);
    await ui?.stop();
  });

  it('the suppressions and the block list show IDN domains readably, the stored form on hover', async () => {
    await page.goto(`${ui.baseUrl}/ui/#/orgs/acme/suppressions`);
    const suppressed = page.getByRole('table', { name: 'Suppressed addresses' }).getByText('zoë@exämple.com', { exact: true });
    await suppressed.waitFor();
    expect(await suppressed.getAttribute('title')).toBe('zoë@xn--exmple-cua.com');
    await page.getByRole('button', { name: 'Remove zoë@exämple.com' }).waitFor();
    await shot(page, 'idn-suppressions');
    await expectNoSeriousA11yViolations(page);

    await page.goto(`${ui.baseUrl}/ui/#/orgs/acme/suppressions?list=block`);
    const blocked = page.getByRole('table', { name: 'Block list' }).getByText('@bücher.de', { exact: true });
    await blocked.waitFor();
    expect(await blocked.getAttribute('title')).toBe('@xn--bcher-kva.de');
    await shot(page, 'idn-block-list');
  }, 60_000);

  it('a link domain that is no domain name is named beside the field', async () => {
    await page.goto(`${ui.baseUrl}/ui/#/orgs/acme/settings`);
    const field = page.getByLabel('Link domains');
    await field.waitFor();
    await field.fill('example.com\nhttps://evil.test/x');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const error = page.locator('.field.has-error .field-error');
    await error.waitFor();
    expect(await error.textContent()).toContain('Line 2: is "https://evil.test/x", not a domain name');
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    const stored = await ui.admin('GET', '/organizations/acme');
    expect((stored.body as { security: { link_domains: string[] } }).security.link_domains).toEqual([]);
  }, 60_000);
});
