import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable } from '../../support/browser.js';
import { closeUi, DESKTOP, expectNoSeriousA11yViolations, openUi, shots, signIn } from '../../support/ui/page.js';
import { seedAcmeWithRelay, startUiServer, type UiServer } from '../../support/ui/server.js';

/**
 * Issue 29, the template editor: an existing template with required parameters opens on a
 * rendered preview (its stored sample, or one generated from the schema) and "Send test" sends
 * with it; leaving with unsaved changes asks first (in-app links, back, reload), Ctrl+S saves;
 * "New template" starts without an error.
 */

const TEMPLATE = {
  subject: 'Hi {{name}} ({{plan}})',
  to: '{{email}}',
  from_email: '',
  service_id: null,
  html: '<p>Hello {{name}}, seats: {{seats}}</p>',
  text: 'Hello {{name}}',
  params: [
    { name: 'name', type: 'string', required: true },
    { name: 'email', type: 'email', required: true },
    { name: 'plan', type: 'string', enum: ['pro', 'free'], required: true },
    { name: 'seats', type: 'integer', minimum: 1, required: true },
    { name: 'note', type: 'string' },
  ],
  captcha: false,
  allow_dynamic_recipients: true,
  allow_attachments: false,
  strict_params: true,
  enforce_link_allowlist: false,
  frozen: false,
};

describe.skipIf(!chromiumAvailable('the template editor guard E2E test'))(
  'operator UI: template samples and unsaved edits',
  () => {
    let ui: UiServer;
    let page: Page;

    beforeAll(async () => {
      ui = await startUiServer({ smtp: true });
      await seedAcmeWithRelay(ui);
      // Written as before issue 29: no sample stored.
      const bare = await ui.admin('PUT', '/organizations/acme/templates/bare', TEMPLATE);
      expect(bare.status, JSON.stringify(bare.body)).toBe(201);
      const sampled = await ui.admin('PUT', '/organizations/acme/templates/sampled', {
        ...TEMPLATE,
        sample_params: { name: 'Ada', email: 'ada@example.org', plan: 'free', seats: 3 },
      });
      expect(sampled.status, JSON.stringify(sampled.body)).toBe(201);
      page = await openUi(ui.baseUrl, { cleanup: ui.cleanup, viewport: DESKTOP });
      await signIn(page, ui.baseUrl, ui.token);
    }, 60_000);

    afterAll(async () => {
      if (page !== undefined) await closeUi(page);
      await ui?.stop();
    });

    const preview = () => page.getByRole('region', { name: 'Preview' });
    const open = async (id: string) => {
      await page.goto(`${ui.baseUrl}/ui/#/orgs/acme/templates/${id}`);
      await page.getByRole('heading', { name: `Template ${id}`, level: 1 }).waitFor();
    };
    const sidebarLink = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });
    const leaveDialog = () => page.getByRole('alertdialog', { name: 'Leave without saving?' });

    it('opens a template without a stored sample on a rendered preview, from a sample generated from its schema', async () => {
      await open('bare');
      await expect.poll(() => preview().getByTestId('preview-subject').textContent()).toBe('Hi Ada (pro)');
      expect(await preview().getByLabel('email (required)').inputValue()).toBe('ada@example.com');
      expect(await preview().getByLabel('seats (required)').inputValue()).toBe('1');
      expect(await preview().getByLabel('note').inputValue()).toBe('');
      expect(await page.getByRole('alert').count()).toBe(0);
      // Nothing was edited: no "unsaved changes", and leaving does not ask.
      expect(await page.getByText('Version 1', { exact: true }).count()).toBe(1);
      const id = page.getByLabel('Template id');
      expect(await id.getAttribute('readonly')).not.toBeNull();
      // A string, not a function: the tests' TypeScript has no DOM types.
      expect(await page.evaluate('getComputedStyle(document.querySelector("input[readonly]")).borderStyle')).toBe('dashed');
      // The id field itself (not just the first read-only input on the page) looks read-only.
      const idOf = await id.getAttribute('id');
      expect(await page.evaluate(`getComputedStyle(document.getElementById(${JSON.stringify(idOf)})).borderStyle`)).toBe(
        'dashed',
      );
      await page.getByText('Sends name this template by its id; it cannot change.').waitFor();
      await page.evaluate('window.scrollTo(0, 0)');
      // The sticky preview column opens at its top: its "Preview" heading and first sample field in view.
      expect(await page.evaluate('document.querySelector(".template-side").scrollTop')).toBe(0);
      await shots(page, 'template-generated-sample');
      expect(await page.evaluate('document.querySelector(".template-side").scrollTop')).toBe(0);
      await expectNoSeriousA11yViolations(page);
    }, 60_000);

    it('keeps the preview in view beside the code while the form scrolls (desktop)', async () => {
      await open('bare');
      // Afresh: the screenshots above scrolled the preview column itself (it scrolls on its own when taller than the window).
      await page.reload();
      await page.getByRole('heading', { name: 'Template bare', level: 1 }).waitFor();
      await page.getByRole('textbox', { name: 'HTML' }).scrollIntoViewIfNeeded();
      await page.evaluate('window.scrollBy(0, 400)');
      const box = await preview().boundingBox();
      const code = await page.getByRole('textbox', { name: 'HTML' }).boundingBox();
      expect(box).not.toBeNull();
      expect(box?.y ?? -1).toBeGreaterThanOrEqual(0);
      expect(box?.y ?? 900).toBeLessThan(60);
      expect((box?.x ?? 0) > (code?.x ?? 0) + (code?.width ?? 0) - 1).toBe(true);
    }, 60_000);

    it('uses the stored sample for the preview and Send test', async () => {
      await open('sampled');
      await expect.poll(() => preview().getByTestId('preview-subject').textContent()).toBe('Hi Ada (free)');
      expect(await preview().getByLabel('seats (required)').inputValue()).toBe('3');
      await page.getByLabel('Send a test to').fill('tester@example.com');
      await page.getByRole('button', { name: 'Send test' }).click();
      await page.getByRole('status').filter({ hasText: 'Test accepted' }).waitFor();
      await expect
        .poll(() => ui.smtp?.received.some((m) => m.rcptTo.includes('tester@example.com')), { timeout: 15_000 })
        .toBe(true);
      const mail = await ui.smtp?.parse(ui.smtp.received.findIndex((m) => m.rcptTo.includes('tester@example.com')));
      expect(mail?.subject).toBe('Hi Ada (free)');
    }, 60_000);

    it('asks before a sidebar link leaves unsaved changes: Stay keeps them, Leave goes', async () => {
      await open('sampled');
      await page.getByLabel('Subject').fill('Changed {{name}}');
      await page.getByText('Version 1 · unsaved changes').waitFor();
      await sidebarLink('Messages').click();
      await leaveDialog().waitFor();
      expect(await page.evaluate('document.activeElement.textContent')).toBe('Stay on this page');
      await shots(page, 'template-leave-dialog');
      await expectNoSeriousA11yViolations(page);
      await leaveDialog().getByRole('button', { name: 'Stay on this page' }).click();
      await leaveDialog().waitFor({ state: 'hidden' });
      expect(page.url()).toMatch(/#\/orgs\/acme\/templates\/sampled$/);
      expect(await page.getByLabel('Subject').inputValue()).toBe('Changed {{name}}');

      // Escape is "stay" too.
      await sidebarLink('Messages').click();
      await leaveDialog().waitFor();
      await page.keyboard.press('Escape');
      await leaveDialog().waitFor({ state: 'hidden' });
      expect(await page.getByLabel('Subject').inputValue()).toBe('Changed {{name}}');

      await sidebarLink('Messages').click();
      await leaveDialog().getByRole('button', { name: 'Leave without saving' }).click();
      await page.getByRole('heading', { name: 'Messages', level: 1 }).waitFor();
      expect(page.url()).toMatch(/#\/orgs\/acme\/messages$/);
      const stored = await ui.admin('GET', '/organizations/acme/templates/sampled');
      expect(stored.body).toMatchObject({ version: 1, content: { subject: 'Hi {{name}} ({{plan}})' } });
    }, 60_000);

    it('asks on Back, and the browser asks on reload', async () => {
      await page.goto(`${ui.baseUrl}/ui/#/orgs/acme/templates`);
      await page.getByRole('link', { name: 'sampled' }).click();
      await page.getByRole('heading', { name: 'Template sampled', level: 1 }).waitFor();
      await preview().getByLabel('name (required)').fill('Grace');
      await page.goBack();
      await leaveDialog().waitFor();
      await leaveDialog().getByRole('button', { name: 'Stay on this page' }).click();
      expect(page.url()).toMatch(/#\/orgs\/acme\/templates\/sampled$/);
      expect(await preview().getByLabel('name (required)').inputValue()).toBe('Grace');
      await page.getByRole('heading', { name: 'Template sampled', level: 1 }).waitFor();

      const dialogs: string[] = [];
      page.once('dialog', (d) => {
        dialogs.push(d.type());
        void d.dismiss();
      });
      // Dismissed, the reload never happens: its wait ends in a timeout, and the edit is still there.
      await page.reload({ timeout: 3000 }).catch(() => undefined);
      expect(dialogs).toEqual(['beforeunload']);
      expect(await preview().getByLabel('name (required)').inputValue()).toBe('Grace');
      await sidebarLink('Templates').click();
      await leaveDialog().getByRole('button', { name: 'Leave without saving' }).click();
      await page.getByRole('heading', { name: 'Templates', level: 1 }).waitFor();
    }, 60_000);

    it('saves with Ctrl+S, the sample included; then leaves without asking', async () => {
      await open('sampled');
      await preview().getByLabel('name (required)').fill('Grace');
      await page.getByLabel('Subject').fill('Saved {{name}}');
      await page.getByLabel('Subject').press('Control+s');
      await page.getByText('Saved as version 2.').waitFor();
      const stored = await ui.admin('GET', '/organizations/acme/templates/sampled');
      expect(stored.body).toMatchObject({
        version: 2,
        content: { subject: 'Saved {{name}}' },
        sample_params: { name: 'Grace', email: 'ada@example.org', plan: 'free', seats: 3 },
      });
      // From inside a code editor too: nothing changed, so there is nothing to save.
      await page.getByRole('textbox', { name: 'HTML' }).click();
      await page.keyboard.press('Control+s');
      await page.getByText('No changes to save.').waitFor();
      await sidebarLink('Messages').click();
      await page.getByRole('heading', { name: 'Messages', level: 1 }).waitFor();
      expect(await leaveDialog().count()).toBe(0);
    }, 60_000);

    it('starts "New template" without an error; untouched, it is left without a question', async () => {
      await page.goto(`${ui.baseUrl}/ui/#/orgs/acme/templates/new`);
      await page.getByRole('heading', { name: 'New template', level: 1 }).waitFor();
      await preview().getByText('The preview shows once the template has a To address.').waitFor();
      expect(await page.getByRole('alert').count()).toBe(0);
      await shots(page, 'template-new');
      await expectNoSeriousA11yViolations(page);
      // Untouched, it can be left without a question.
      await sidebarLink('Templates').click();
      await page.getByRole('heading', { name: 'Templates', level: 1 }).waitFor();
    }, 60_000);
  },
);
