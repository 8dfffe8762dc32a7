import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { smtpError } from '../../support/smtp-sink.js';
import { chromiumAvailable } from '../../support/browser.js';
import { closeUi, expectNoSeriousA11yViolations, openUi, shot, signIn } from '../../support/ui/page.js';
import { startUiServer, type UiServer } from '../../support/ui/server.js';

/**
 * The organization screens end to end (issue 15), against a real `mailroom serve` and a
 * loopback SMTP sink: create an organization and change its settings, top up credits, create
 * an SMTP service and test it, see a new private key once, rotate a key, and the overview's
 * chart after a few sends through POST /v1/send with that key.
 */
describe.skipIf(!chromiumAvailable('the organization UI flow'))('operator UI: organizations, services, keys, overview', () => {
  let ui: UiServer;
  let page: Page;
  const org = 'globex';

  beforeAll(async () => {
    // The sink refuses one address, so the chart has a bounced or failed part too.
    ui = await startUiServer({
      smtp: { rcpt: (address) => (address.startsWith('refused@') ? smtpError(550, '5.1.1 No such user') : undefined) },
    });
    page = await openUi(ui.baseUrl, { cleanup: ui.cleanup });
    // Shorter than the test's own timeout, so a missing element fails naming its locator.
    page.setDefaultTimeout(10_000);
    await signIn(page, ui.baseUrl, ui.token);
  }, 60_000);

  afterAll(async () => {
    if (page !== undefined) await closeUi(page);
    await ui?.stop();
  });

  const go = async (hash: string) => {
    await page.goto(`${ui.baseUrl}/ui/${hash}`);
  };

  it('creates an organization and changes its settings', async () => {
    await page.getByRole('table', { name: 'Organizations' }).waitFor();
    await expectNoSeriousA11yViolations(page);
    await page.getByRole('link', { name: 'New organization' }).click();
    await page.getByRole('heading', { name: 'New organization' }).waitFor();
    await expectNoSeriousA11yViolations(page);
    await page.getByLabel('Id', { exact: true }).fill(org);
    await page.getByLabel('Name').fill('Globex Corporation');
    // The form starts unlimited on business_200k (issue 29): this flow meters, from 5 credits, on free.
    await page.getByLabel('Plan').selectOption('free');
    await page.getByRole('combobox', { name: 'Credits', exact: true }).selectOption('metered');
    await page.getByLabel('Starting credits').fill('5');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: `Settings of ${org}` }).waitFor();

    const created = await ui.admin('GET', `/organizations/${org}`);
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      id: org,
      name: 'Globex Corporation',
      credits: 5,
      plan: 'free',
      when_out_of_credits: 'hold',
    });

    await page.getByLabel('Plan').selectOption('pro');
    await page.getByLabel('When credits run out').selectOption('reject');
    await page.getByLabel('Block headless browsers').check();
    await page.getByLabel('Allowed origins').fill('globex.example\n*.globex.example');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText(/^Saved at/).waitFor();
    const changed = await ui.admin('GET', `/organizations/${org}`);
    expect(changed.body).toMatchObject({
      plan: 'pro',
      when_out_of_credits: 'reject',
      security: { block_headless: true, allowed_origins: ['globex.example', '*.globex.example'] },
    });
  });

  it('tops up credits', async () => {
    await page.getByLabel('Credits to add').fill('1000');
    await page.getByRole('button', { name: 'Top up' }).click();
    await page.getByText('Added 1,000 credits: the balance is 1,005').waitFor();
    const credits = await ui.admin('GET', `/organizations/${org}/credits`);
    expect(credits.body).toMatchObject({ credits: 1005 });
    await shot(page, 'org-settings');
    await expectNoSeriousA11yViolations(page);
  });

  it('refuses to create an organization over an existing one, or one with the id "new"', async () => {
    const before = await ui.admin('GET', `/organizations/${org}`);
    await go('#/orgs/new');
    await page.getByRole('heading', { name: 'New organization' }).waitFor();
    const id = page.getByLabel('Id', { exact: true });
    await id.fill(org);
    await page.getByLabel('Name').fill('Not Globex');
    await page.getByRole('combobox', { name: 'Credits', exact: true }).selectOption('metered');
    await page.getByLabel('Starting credits').fill('7');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByText('An organization with this id already exists').waitFor();
    expect(await id.getAttribute('aria-invalid')).toBe('true');
    await shot(page, 'org-create-id-taken');
    await expectNoSeriousA11yViolations(page);
    // Nothing was written: the existing organization is as it was.
    const after = await ui.admin('GET', `/organizations/${org}`);
    expect(after.body).toEqual(before.body);
    expect(after.body).toMatchObject({ name: 'Globex Corporation', credits: 1005, plan: 'pro' });

    // `new` is the create page's own address: refused before asking the server.
    await id.fill('new');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByText('"new" is reserved').waitFor();
    expect((await ui.admin('GET', '/organizations/new')).status).toBe(404);

    // The link opens the existing organization.
    await id.fill(org);
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('link', { name: 'open it' }).click();
    await page.getByRole('heading', { name: `Settings of ${org}` }).waitFor();
  });

  it('creates an SMTP service pointed at the sink and tests it', async () => {
    await go(`#/orgs/${org}/services`);
    await page.getByRole('link', { name: 'New service' }).click();
    await page.getByLabel('Id (required)').fill('sink');
    await page.getByRole('combobox', { name: 'Provider', exact: true }).selectOption('smtp');
    await page.getByLabel('Host (required)').fill('127.0.0.1');
    await page.getByLabel('Port (required)').fill(String(ui.smtp?.port));
    await page.getByLabel('Default service of the organization').check();
    await page.getByLabel('Default from address').fill('noreply@globex.example');
    await page.getByRole('button', { name: 'Create service' }).click();
    await page.getByRole('heading', { name: 'Service sink' }).waitFor();

    const stored = await ui.admin('GET', `/organizations/${org}/services/sink`);
    expect(stored.body).toMatchObject({ provider: 'smtp', default: true, smtp: { host: '127.0.0.1', port: ui.smtp?.port } });

    // The password is write-only: empty, with the placeholder.
    expect(await page.getByLabel('Password').inputValue()).toBe('');

    await page.getByRole('button', { name: 'Test', exact: true }).click();
    await page.getByText('Test passed').waitFor();
    await expect(page.locator('#events-url').textContent()).resolves.toContain(`${ui.baseUrl}/v1/provider-events/`);
    await shot(page, 'service-edit-tested');
    await expectNoSeriousA11yViolations(page);

    // Saving again keeps what is not shown (no password was ever set, none is sent).
    await page.getByLabel('Default from name').fill('Globex');
    await page.getByRole('button', { name: 'Save service' }).click();
    await page.getByText('Saved (version 2)').waitFor();
    expect((await ui.admin('GET', `/organizations/${org}/services/sink`)).body).toMatchObject({
      from_name: 'Globex',
      smtp: { pass: '' },
    });

    // A second "sink" is refused: the form does not replace the existing service.
    await go(`#/orgs/${org}/services/new`);
    await page.getByLabel('Id (required)').fill('sink');
    await page.getByRole('combobox', { name: 'Provider', exact: true }).selectOption('outbox');
    await page.getByRole('button', { name: 'Create service' }).click();
    await page.getByText('A service with this id already exists').waitFor();
    expect((await ui.admin('GET', `/organizations/${org}/services/sink`)).body).toMatchObject({
      provider: 'smtp',
      version: 2,
      from_name: 'Globex',
    });

    // The refused form still holds what was typed: leaving asks first (the service form's leave guard).
    await go(`#/orgs/${org}/services`);
    await page
      .getByRole('alertdialog', { name: 'Leave without saving?' })
      .getByRole('button', { name: 'Leave without saving' })
      .click();
    await page.getByRole('table', { name: 'Services' }).getByRole('link', { name: 'sink' }).waitFor();
    await expectNoSeriousA11yViolations(page);
  });

  it("shows the provider's error when a service test fails", async () => {
    // A secret set through the API reads back as the mask; the page shows it empty, and a
    // port nothing listens on makes the test fail at connect.
    const put = await ui.admin('PUT', `/organizations/${org}/services/dead`, {
      provider: 'smtp',
      default: false,
      smtp: { host: '127.0.0.1', port: 1, user: 'u', pass: 'secret-pass' },
      from_email: 'noreply@globex.example',
    });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    await go(`#/orgs/${org}/services/dead`);
    const password = page.getByLabel('Password');
    await password.waitFor();
    expect(await password.inputValue()).toBe('');
    expect(await password.getAttribute('placeholder')).toBe('unchanged (write-only)');
    expect(await page.content()).not.toContain('secret-pass');
    await page.getByRole('button', { name: 'Test', exact: true }).click();
    await page.getByText(/Test failed \(connect/).waitFor();
    await shot(page, 'service-test-failed');
    await expectNoSeriousA11yViolations(page);
    // Saved without typing it, the stored password stays.
    await page.getByLabel('Default from name').fill('Dead');
    await page.getByRole('button', { name: 'Save service' }).click();
    await page.getByText('Saved (version 2)').waitFor();
    const stored = await ui.admin('GET', `/organizations/${org}/services/dead`);
    expect(stored.body).toMatchObject({ from_name: 'Dead', smtp: { user: 'u', pass: '********' } });

    // The delete dialog (issue 29): nothing waits on this service, so it offers the delete alone.
    await page.getByRole('button', { name: 'Delete…' }).click();
    await page.getByRole('dialog', { name: 'Delete service dead?' }).getByRole('button', { name: 'Delete service' }).click();
    await page.getByRole('table', { name: 'Services' }).waitFor();
    expect((await ui.admin('GET', `/organizations/${org}/services/dead`)).status).toBe(404);
  });

  let privateKey = '';

  it('creates a private key and shows it once', async () => {
    await go(`#/orgs/${org}/keys`);
    await page.getByLabel('Type').selectOption('private');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('it will not be shown again').waitFor();
    privateKey = (await page.locator('.notice code').first().textContent()) ?? '';
    expect(privateKey).toMatch(/^sk_/);
    await shot(page, 'key-created-once');
    await expectNoSeriousA11yViolations(page);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.reload();
    await page.getByRole('table', { name: 'Keys' }).waitFor();
    expect(await page.content()).not.toContain(privateKey);
  });

  it('rotates a key', async () => {
    const before = await ui.admin('GET', `/organizations/${org}/keys`);
    const active = (before.body as { items: Array<{ id: string; type: string; status: string }> }).items.find(
      (k) => k.type === 'private' && k.status === 'active',
    );
    if (active === undefined) throw new Error('no active private key');
    await page.getByRole('button', { name: `Rotate key ${active.id}` }).click();
    await page.getByLabel('Grace period', { exact: true }).fill('1');
    await page.getByRole('button', { name: 'Rotate', exact: true }).click();
    await page.getByText(`replaces ${active.id}`).waitFor();
    const rotated = (await page.locator('.notice code').first().textContent()) ?? '';
    expect(rotated).toMatch(/^sk_/);
    expect(rotated).not.toBe(privateKey);
    privateKey = rotated;
    const after = await ui.admin('GET', `/organizations/${org}/keys`);
    expect((after.body as { items: Array<{ id: string; status: string }> }).items.find((k) => k.id === active.id)?.status).toBe(
      'rotated',
    );
    await shot(page, 'keys');
    await expectNoSeriousA11yViolations(page);
  });

  it('shows sends on the overview chart', async () => {
    const put = async (id: string, to: string) => {
      const template = await ui.admin('PUT', `/organizations/${org}/templates/${id}`, {
        subject: 'Hello {{name}}',
        text: 'Hi {{name}}',
        to,
        from_email: 'noreply@globex.example',
        params: [{ name: 'name', type: 'string', required: true }],
        service_id: null,
        captcha: false,
        allow_dynamic_recipients: false,
        allow_attachments: false,
        strict_params: false,
        enforce_link_allowlist: false,
        frozen: false,
      });
      expect(template.status, JSON.stringify(template.body)).toBe(201);
    };
    await put('hello', 'someone@globex.example');
    await put('refused', 'refused@globex.example');
    for (const [template, name] of [
      ['hello', 'Ann'],
      ['hello', 'Bob'],
      ['hello', 'Cy'],
      ['refused', 'Dee'],
    ] as const) {
      const res = await fetch(`${ui.baseUrl}/v1/send`, {
        method: 'POST',
        headers: { authorization: `Bearer ${privateKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ template_id: template, template_params: { name } }),
      });
      expect(res.status, await res.text()).toBe(202);
    }
    // The worker hands them to the sink; the chart shows each message's status once settled.
    await vi.waitFor(
      async () => {
        const list = await ui.admin('GET', `/organizations/${org}/messages`);
        const statuses = (list.body as { items: Array<{ status: string }> }).items.map((m) => m.status);
        expect(statuses.filter((st) => st === 'queued' || st === 'sending')).toEqual([]);
      },
      { timeout: 20_000, interval: 250 },
    );
    await go(`#/orgs/${org}`);
    const chart = page.getByRole('img', { name: /Messages per day over 7 days/ });
    await chart.waitFor();
    expect(await chart.getAttribute('aria-label')).toContain('4 accepted');
    expect(await chart.getAttribute('aria-label')).toMatch(/1 bounced|1 failed/);
    expect(await page.locator('svg .chart-bar').count()).toBeGreaterThan(0);
    await page.getByRole('button', { name: '30 days' }).click();
    await page.getByRole('img', { name: /over 30 days/ }).waitFor();
    expect(await page.getByRole('button', { name: '30 days' }).getAttribute('aria-pressed')).toBe('true');
    await page.getByRole('button', { name: '90 days' }).click();
    const quarter = page.getByRole('img', { name: /over 90 days/ });
    await quarter.waitFor();
    // Today's sends are in every range: the 90 days count the same four.
    expect(await quarter.getAttribute('aria-label')).toContain('4 accepted');
    expect(page.url()).toContain('days=90');
    await shot(page, 'overview-90-days');
    await page.getByRole('button', { name: '7 days' }).click();
    await page.getByRole('img', { name: /over 7 days/ }).waitFor();
    await shot(page, 'overview');
    await expectNoSeriousA11yViolations(page);
  });
});
