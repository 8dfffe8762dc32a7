import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable } from '../../support/browser.js';
import { closeUi, DESKTOP, expectNoSeriousA11yViolations, openUi, PHONE, shots, signIn } from '../../support/ui/page.js';
import { sendWith, templateBody } from '../../support/ui/seed.js';
import { seedAcmeWithRelay, startUiServer, type UiServer } from '../../support/ui/server.js';

/**
 * Issue 29: on the Messages page filtered to held, rows can be selected and released or
 * cancelled together (a confirm dialog first, a summary after, a link to the credits when they
 * are short); the Suppressions page exports the list as CSV (a download link) and imports one.
 */
const PRIVATE_KEY = 'sk_bulk_csv_e2e_0123456789';

describe.skipIf(!chromiumAvailable('the bulk actions and CSV E2E test'))(
  'operator UI: bulk held actions, suppressions CSV',
  () => {
    let ui: UiServer;
    let page: Page;
    const held: string[] = [];

    beforeAll(async () => {
      ui = await startUiServer({ smtp: true });
      await seedAcmeWithRelay(ui, { org: { plan: 'pro', credits: 0, when_out_of_credits: 'hold' } });
      expect((await ui.admin('POST', '/organizations/acme/keys', { type: 'private', key: PRIVATE_KEY })).status).toBe(201);
      expect(
        (await ui.admin('PUT', '/organizations/acme/templates/order', templateBody('ada@example.com', 'Order'))).status,
      ).toBe(201);
      for (let i = 0; i < 4; i++) {
        const sent = await sendWith(ui, PRIVATE_KEY, 'order');
        expect(sent.status).toBe('held');
        held.push(sent.message_id);
      }
      await ui.admin('POST', '/organizations/acme/suppressions', { email: 'kept@example.com', reason: 'complaint' });
      page = await openUi(ui.baseUrl, { cleanup: ui.cleanup, viewport: DESKTOP });
      page.setDefaultTimeout(10_000);
      await signIn(page, ui.baseUrl, ui.token);
    }, 90_000);

    afterAll(async () => {
      if (page !== undefined) await closeUi(page);
      await ui?.stop();
    });

    const go = (hash: string) => page.goto(`${ui.baseUrl}/ui/${hash}`);
    const statusOf = async (id: string) =>
      ((await ui.admin('GET', `/organizations/acme/messages/${id}`)).body as { status: string }).status;
    const fitsPhone = async () => {
      await page.setViewportSize(PHONE);
      const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      await page.setViewportSize(DESKTOP);
      return width;
    };

    it('filtered to held: checkboxes, select all, release with credits short links to the top-up', async () => {
      await go('#/orgs/acme/messages?status=held');
      const bar = page.getByRole('region', { name: 'Bulk actions' });
      await bar.waitFor();
      await bar.getByText('None selected').waitFor();
      expect(await page.getByRole('button', { name: 'Release selected' }).isDisabled()).toBe(true);
      // Held with no credits: the top-up is offered before anything is tried.
      await bar.getByRole('link', { name: 'Add credits in Settings' }).waitFor();
      await bar.getByLabel('Select all on this page').check();
      await bar.getByText('4 messages selected').waitFor();
      await page.getByRole('checkbox', { name: `message ${held[0]}` }).uncheck();
      await bar.getByText('3 messages selected').waitFor();
      // A reload of the same page (by hand, or auto-refresh's) keeps the rows still listed selected.
      const reloaded = page.waitForResponse((r) => r.url().includes('/organizations/acme/messages?'));
      await page.getByRole('button', { name: 'Reload', exact: true }).click();
      await reloaded;
      await bar.getByText('3 messages selected').waitFor();
      expect(await page.getByRole('checkbox', { name: `message ${held[1]}` }).isChecked()).toBe(true);
      await expectNoSeriousA11yViolations(page);
      await shots(page, 'messages-bulk-selected');
      expect(await fitsPhone()).toBeLessThanOrEqual(PHONE.width);

      await page.getByRole('button', { name: 'Release selected' }).click();
      const dialog = page.getByRole('dialog', { name: 'Release 3 messages?' });
      await dialog.waitFor();
      await expectNoSeriousA11yViolations(page);
      await shots(page, 'messages-bulk-confirm');
      await dialog.getByRole('button', { name: 'Release', exact: true }).click();
      await bar.getByText('0 messages released; 3 not:').waitFor();
      await bar.getByText('3 messages: not enough credits').waitFor();
      const topUp = bar.getByRole('link', { name: 'Add credits in Settings' });
      expect(await topUp.getAttribute('href')).toMatch(/#\/orgs\/acme\/settings$/);
      await shots(page, 'messages-bulk-short');
      expect(await fitsPhone()).toBeLessThanOrEqual(PHONE.width);
      for (const id of held) expect(await statusOf(id)).toBe('held');
    }, 60_000);

    it('cancel selected asks first; Escape keeps them; confirming discards them and the list reloads', async () => {
      const bar = page.getByRole('region', { name: 'Bulk actions' });
      await page.getByRole('checkbox', { name: `message ${held[0]}` }).check();
      await page.getByRole('checkbox', { name: `message ${held[1]}` }).check();
      await page.getByRole('button', { name: 'Cancel selected' }).click();
      const dialog = page.getByRole('dialog', { name: 'Cancel 2 messages?' });
      await dialog.waitFor();
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      expect(await statusOf(held[0] ?? '')).toBe('held');
      await page.getByRole('button', { name: 'Cancel selected' }).click();
      await dialog.getByRole('button', { name: 'Cancel messages' }).click();
      await bar.getByText('2 messages cancelled.').waitFor();
      expect([await statusOf(held[0] ?? ''), await statusOf(held[1] ?? '')]).toEqual(['discarded', 'discarded']);
      // The list reloads to the two still held, none selected.
      await page.getByRole('checkbox', { name: `message ${held[0]}` }).waitFor({ state: 'detached' });
      expect(await page.getByRole('checkbox', { name: /, message / }).count()).toBe(2);
      await bar.getByText('None selected').waitFor();
      await shots(page, 'messages-bulk-cancelled');
      // Another filter: no checkboxes, no bar.
      await go('#/orgs/acme/messages?status=discarded');
      await page.getByRole('link', { name: `message ${held[0]}` }).waitFor();
      expect(await page.getByRole('region', { name: 'Bulk actions' }).count()).toBe(0);
    }, 60_000);

    it('suppressions: Export CSV downloads the list, Import CSV adds addresses and lists bad lines', async () => {
      await go('#/orgs/acme/suppressions');
      const section = page.getByRole('region', { name: 'Import and export' });
      await section.waitFor();
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        section.getByRole('link', { name: 'Export CSV' }).click(),
      ]);
      expect(download.suggestedFilename()).toBe('suppressions-acme.csv');
      const file = await download.path();
      expect(fs.readFileSync(file, 'utf8')).toMatch(
        /^email,reason,source,created_at,message_id\r\nkept@example\.com,complaint,complaint,[0-9T:.Z-]+,\r\n$/,
      );

      const csv = 'email,reason\nNew.One@Example.com,\n=cmd@example.com,manual\nnot-an-address,\nkept@example.com,hard_bounce\n';
      await section.getByLabel('CSV file to import').setInputFiles({
        name: 'list.csv',
        mimeType: 'text/csv',
        buffer: Buffer.from(csv),
      });
      await section.getByRole('button', { name: 'Import CSV' }).click();
      await section.getByText('Read 4 rows: 2 added, 1 already suppressed, 1 invalid.').waitFor();
      await section.getByText(/Line 4: not-an-address/).waitFor();
      // The list reloaded with the new addresses.
      await page.getByRole('table', { name: 'Suppressed addresses' }).getByText('new.one@example.com').waitFor();
      await expectNoSeriousA11yViolations(page);
      await shots(page, 'suppressions-csv', '.csv-actions');
      expect(await fitsPhone()).toBeLessThanOrEqual(PHONE.width);
    }, 60_000);
  },
);
