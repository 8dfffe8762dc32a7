import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAcmeWithRelay, startUiServer, type UiServer } from '../../support/ui/server.js';
import { chromiumAvailable } from '../../support/browser.js';
import { closeUi, expectNoSeriousA11yViolations, openUi, shot, signIn } from '../../support/ui/page.js';

/**
 * Issue 15, templates: create a template with parameters in the editor, see a validation issue
 * and then a valid render in the live preview, save, send a test through a loopback SMTP sink,
 * find it in the history, restore an older version; and a template's <script> previewed
 * without running.
 */
describe.skipIf(!chromiumAvailable('the template editor E2E test'))('operator UI: templates', () => {
  let ui: UiServer;
  let page: Page;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    ui = await startUiServer({ smtp: true });
    await seedAcmeWithRelay(ui);
    page = await openUi(ui.baseUrl, { cleanup: ui.cleanup });
    page.on('console', (msg) => {
      if (msg.type() === 'error') consoleErrors.push(msg.text());
    });
    await signIn(page, ui.baseUrl, ui.token);
  }, 60_000);

  afterAll(async () => {
    if (page !== undefined) await closeUi(page);
    await ui?.stop();
  });

  const preview = () => page.getByRole('region', { name: 'Preview' });
  const param = (n: number) => page.getByRole('group', { name: `Parameter ${n}` });

  it('creates a template with parameters, previews it live, saves, sends a test and restores a version', async () => {
    await page.goto(`${ui.baseUrl}/ui/#/orgs/acme/templates`);
    await page.getByRole('link', { name: 'New template' }).click();
    await page.getByRole('heading', { name: 'New template' }).waitFor();

    await page.getByLabel('Template id').fill('welcome');
    await page.getByLabel('Subject').fill('Welcome {{name}}');
    await page.getByLabel('To', { exact: true }).fill('ops@example.com');
    await page.getByRole('textbox', { name: 'HTML' }).fill('<h1>Hello {{name}}</h1><p>Your code is {{code}}.</p>');
    await page.getByRole('textbox', { name: 'Text' }).fill('Hello {{name}}, your code is {{code}}.');
    // Tab leaves a code editor (no focus trap) for the next one.
    await page.getByRole('textbox', { name: 'HTML' }).focus();
    await page.keyboard.press('Tab');
    expect(
      await page.evaluate(
        'document.activeElement.getAttribute("aria-labelledby") === ' +
          'document.querySelectorAll(".code-editor .cm-content")[1].getAttribute("aria-labelledby")',
      ),
    ).toBe(true);
    expect(await page.getByRole('textbox', { name: 'HTML' }).textContent()).not.toContain('\t');

    await page.getByRole('button', { name: 'Add parameter' }).click();
    await param(1).getByLabel('Name').fill('name');
    await param(1).getByLabel('Required').check();
    await page.getByRole('button', { name: 'Add parameter' }).click();
    await param(2).getByLabel('Name').fill('code');
    await param(2).getByLabel('Type').selectOption('integer');
    await param(2).getByLabel('Minimum').fill('1');

    // A bad sample: the server's issue shows beside the field, and in the summary.
    await preview().getByLabel('name (required)').fill('Ada');
    await preview().getByLabel('code').fill('0');
    const codeField = preview().locator('.field.has-error', { hasText: 'code must be at least 1' });
    await codeField.waitFor();
    expect(await codeField.locator('input').getAttribute('aria-invalid')).toBe('true');
    await expect.poll(() => preview().getByRole('alert').filter({ hasText: 'do not pass the schema' }).count()).toBe(1);
    await shot(page, 'template-validation-issue');
    await expectNoSeriousA11yViolations(page);

    // A good one: the render, with the HTML inside the sandboxed frame.
    await preview().getByLabel('code').fill('7');
    await expect.poll(() => preview().getByTestId('preview-subject').textContent()).toBe('Welcome Ada');
    await expect.poll(() => page.frameLocator('iframe.preview').locator('h1').textContent()).toBe('Hello Ada');
    expect(await preview().locator('.preview-text').textContent()).toBe('Hello Ada, your code is 7.');
    expect(await page.locator('iframe.preview').getAttribute('sandbox')).toBe('');
    await shot(page, 'template-editor-preview');

    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByRole('heading', { name: 'Template welcome' }).waitFor();
    const created = await ui.admin('GET', '/organizations/acme/templates/welcome');
    expect(created.body).toMatchObject({
      version: 1,
      params: [
        { name: 'name', type: 'string', required: true },
        { name: 'code', type: 'integer', minimum: 1 },
      ],
      content: { subject: 'Welcome {{name}}', to: 'ops@example.com' },
    });

    // An edit is a new version; a server-side refusal lands on its field.
    await page.getByLabel('Subject').fill('Hi {{name}');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.locator('.field.has-error', { hasText: 'is not a valid template' }).getByLabel('Subject').waitFor();
    await shot(page, 'template-save-error');
    await page.getByLabel('Subject').fill('Hi {{name}}');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved as version 2.').waitFor();

    // The samples typed before the first save are still there.
    expect(await preview().getByLabel('name (required)').inputValue()).toBe('Ada');
    expect(await preview().getByLabel('code').inputValue()).toBe('7');
    await expect.poll(() => preview().getByTestId('preview-subject').textContent()).toBe('Hi Ada');
    await expect.poll(() => page.frameLocator('iframe.preview').locator('h1').textContent()).toBe('Hello Ada');
    await expectNoSeriousA11yViolations(page);

    // Editing the stored template: a bad sample shows its issue again, and a good one renders again.
    await preview().getByLabel('code').fill('0');
    await preview().locator('.field.has-error', { hasText: 'code must be at least 1' }).waitFor();
    await shot(page, 'template-edit-validation-issue');
    await preview().getByLabel('code').fill('8');
    await expect.poll(() => preview().locator('.preview-text').textContent()).toBe('Hello Ada, your code is 8.');
    expect(await preview().locator('.field.has-error').count()).toBe(0);
    await preview().getByLabel('code').fill('7');
    await expect.poll(() => preview().locator('.preview-text').textContent()).toBe('Hello Ada, your code is 7.');

    // The history shows versions 2 and 1; restoring 1 stores version 3 with its content.
    const history = page.getByRole('region', { name: 'Version history' });
    await history.getByRole('cell', { name: '1', exact: true }).waitFor();
    await history.getByRole('button', { name: 'View version 1' }).click();
    await history.getByRole('region', { name: 'Version 1' }).getByText('Welcome {{name}}').waitFor();
    // A full-page picture taken while scrolled down leaves the sandboxed (cross-origin) frame unpainted.
    await page.evaluate('window.scrollTo(0, 0)');
    await shot(page, 'template-history');
    page.once('dialog', (d) => void d.accept());
    await history.getByRole('button', { name: 'Restore version 1' }).click();
    await page.getByText('Restored as version 3.').waitFor();
    await expect.poll(() => page.getByLabel('Subject').inputValue()).toBe('Welcome {{name}}');
    const restored = await ui.admin('GET', '/organizations/acme/templates/welcome');
    expect(restored.body).toMatchObject({ version: 3, content: { subject: 'Welcome {{name}}' } });

    await page.getByLabel('Send a test to').fill('tester@example.com');
    await page.getByRole('button', { name: 'Send test' }).click();
    const link = page.getByRole('status').getByRole('link');
    await link.waitFor();
    const messageId = (await link.textContent()) ?? '';
    expect(messageId).toMatch(/^msg_/);
    expect(await link.getAttribute('href')).toBe(`#/orgs/acme/messages/${messageId}`);
    await expect
      .poll(() => ui.smtp?.received.some((m) => m.rcptTo.includes('tester@example.com')), { timeout: 15_000 })
      .toBe(true);
    const mail = await ui.smtp?.parse(ui.smtp.received.findIndex((m) => m.rcptTo.includes('tester@example.com')));
    expect(mail?.subject).toBe('Welcome Ada');

    // The test message is in the history with its timeline.
    await expect
      .poll(
        async () => {
          const detail = await ui.admin('GET', `/organizations/acme/messages/${messageId}`);
          return (detail.body as { status?: string }).status;
        },
        { timeout: 15_000 },
      )
      .toBe('sent');
    const detail = await ui.admin('GET', `/organizations/acme/messages/${messageId}`);
    expect((detail.body as { events: Array<{ type: string }> }).events.map((e) => e.type)).toContain('sent');
    await page.goto(`${ui.baseUrl}/ui/#/orgs/acme/messages`);
    await page.getByRole('link', { name: `Message ${messageId}` }).click();
    const timeline = page.getByRole('list', { name: 'Timeline, oldest first' });
    await timeline.getByText('sent', { exact: true }).first().waitFor();
    await shot(page, 'template-test-message');

    await page.goto(`${ui.baseUrl}/ui/#/orgs/acme/templates`);
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'welcome' }) });
    await expect
      .poll(() => row.getByRole('cell').allTextContents())
      .toEqual(['welcome', 'welcome', 'Welcome {{name}}', '3', expect.stringMatching(/UTC$/)]);
    await shot(page, 'templates-list');
    await expectNoSeriousA11yViolations(page);

    expect(
      consoleErrors.filter((e) => /Content Security Policy/i.test(e)),
      consoleErrors.join('\n'),
    ).toEqual([]);
  }, 120_000);

  it('previews a template holding <script> without running it', async () => {
    const put = await ui.admin('PUT', '/organizations/acme/templates/pwn', {
      subject: 'Pwn',
      to: 'ops@example.com',
      from_email: '',
      service_id: null,
      params: [],
      html:
        '<p>Before</p><script>document.title = "pwned"; parent.__pwned = 1;</script>' +
        '<img src="x" onerror="parent.__pwned = 2">',
      captcha: false,
      allow_dynamic_recipients: false,
      allow_attachments: false,
      strict_params: false,
      enforce_link_allowlist: false,
      frozen: false,
    });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    await page.goto(`${ui.baseUrl}/ui/#/orgs/acme/templates/pwn`);
    await page.evaluate('window.__flag = "kept"');
    await expect.poll(() => page.frameLocator('iframe.preview').locator('p').textContent()).toBe('Before');
    const frame = page.locator('iframe.preview');
    expect(await frame.getAttribute('sandbox')).toBe('');
    expect(await page.title()).toBe('Template · acme · mailroom');
    expect(await page.evaluate('[window.__pwned, window.__flag]')).toEqual([undefined, 'kept']);
    const inner = page.frames().find((f) => f !== page.mainFrame());
    expect(await inner?.title()).not.toBe('pwned');
    await shot(page, 'template-script-sandboxed');
    await expectNoSeriousA11yViolations(page);
  }, 60_000);

  it('refuses to create a template over an existing one, or one with the id "new"', async () => {
    const before = await ui.admin('GET', '/organizations/acme/templates/pwn');
    expect(before.status).toBe(200);
    await page.goto(`${ui.baseUrl}/ui/#/orgs/acme/templates/new`);
    await page.getByRole('heading', { name: 'New template' }).waitFor();
    await page.getByLabel('Template id').fill('pwn');
    await page.getByLabel('Subject').fill('Replaced');
    await page.getByLabel('To', { exact: true }).fill('ops@example.com');
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByText('A template with this id already exists').waitFor();
    expect(await page.getByRole('link', { name: 'open it' }).getAttribute('href')).toBe('#/orgs/acme/templates/pwn');
    await shot(page, 'template-create-id-taken');
    await expectNoSeriousA11yViolations(page);
    const after = await ui.admin('GET', '/organizations/acme/templates/pwn');
    expect(after.body).toEqual(before.body);

    await page.getByLabel('Template id').fill('new');
    await page.getByText('"new" is reserved').waitFor();
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByText('Fix the fields marked in red first.').waitFor();
    expect((await ui.admin('GET', '/organizations/acme/templates/new')).status).toBe(404);
  }, 60_000);
});
