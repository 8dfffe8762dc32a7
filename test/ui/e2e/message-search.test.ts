import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { chromiumAvailable } from '../../support/browser.js';
import { closeUi, DESKTOP, expectNoSeriousA11yViolations, openUi, PHONE, shots, signIn } from '../../support/ui/page.js';
import { sendWith, templateBody } from '../../support/ui/seed.js';
import { seedAcmeWithRelay, startUiServer, type UiServer } from '../../support/ui/server.js';

/**
 * Issue 29, the Messages page's search: part of a recipient, part of the subject (any case,
 * any alphabet), one message id as pasted, all in the link; the whole row opens the message;
 * auto-refresh shows a new message without a click; Export CSV downloads the filtered list with
 * the session cookie. axe-checked; shots test-output/ui/messages-search*.png.
 */
const KEY = 'sk_message_search_e2e_0123456789';

describe.skipIf(!chromiumAvailable('the message search E2E test'))('operator UI: message search and export', () => {
  let ui: UiServer;
  let page: Page;
  const ids: Record<string, string> = {};
  const go = (hash: string) => page.goto(`${ui.baseUrl}/ui/${hash}`);
  const rows = () => page.getByRole('table', { name: 'Messages, newest first' }).locator('tbody tr.row-linked');
  const expectRows = (n: number) => vi.waitFor(async () => expect(await rows().count()).toBe(n), { timeout: 10_000 });

  beforeAll(async () => {
    ui = await startUiServer({ smtp: true });
    await seedAcmeWithRelay(ui, { org: { plan: 'pro' } });
    expect((await ui.admin('POST', '/organizations/acme/keys', { type: 'private', key: KEY })).status).toBe(201);
    for (const [id, to, subject] of [
      ['order', 'ada@example.com', 'Your order, {{name}}'],
      ['invoice', 'billing@shop.test', 'Rechnung für {{name}}'],
    ] as const) {
      const res = await ui.admin('PUT', `/organizations/acme/templates/${id}`, templateBody(to, subject));
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    ids.ada = (await sendWith(ui, KEY, 'order', { name: 'Ada' })).message_id;
    ids.zoe = (await sendWith(ui, KEY, 'order', { name: 'Zoë' })).message_id;
    ids.anna = (await sendWith(ui, KEY, 'invoice', { name: 'Änna' })).message_id;
    page = await openUi(ui.baseUrl, { cleanup: ui.cleanup, viewport: DESKTOP });
    await signIn(page, ui.baseUrl, ui.token);
  }, 120_000);

  afterAll(async () => {
    if (page !== undefined) await closeUi(page);
    await ui?.stop();
  });

  it('searches by subject, recipient and message id through the form, each search a link', async () => {
    await go('#/orgs/acme/messages');
    await expectRows(3);
    const form = page.getByRole('form', { name: 'Filter messages' });
    await form.getByLabel('Subject contains').fill('RECHNUNG FÜR ä');
    await form.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/subject=RECHNUNG/);
    await expectRows(1);
    expect(await rows().first().textContent()).toContain('Rechnung für Änna');

    await go('#/orgs/acme/messages?recipient=ADA%40EXAMPLE');
    await expectRows(2);
    // Pasted with the spaces a copy picks up: trimmed, its case kept.
    await go('#/orgs/acme/messages');
    await expectRows(3);
    await form.getByLabel('Message id').fill(`  ${ids.zoe}\t`);
    await form.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(new RegExp(`message_id=${ids.zoe}$`));
    await expectRows(1);
    expect(await rows().first().textContent()).toContain('Your order, Zoë');
    await go(`#/orgs/acme/messages?message_id=${(ids.zoe ?? '').toLowerCase()}`);
    await expect.poll(async () => page.getByText('No message matches these filters.').count(), { timeout: 10_000 }).toBe(1);

    await go('#/orgs/acme/messages?subject=order&recipient=ada');
    await expectRows(2);
    await shots(page, 'messages-search');
    await expectNoSeriousA11yViolations(page);
    await page.setViewportSize(PHONE);
    try {
      const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      expect(width).toBeLessThanOrEqual(PHONE.width);
      await expectNoSeriousA11yViolations(page);
    } finally {
      await page.setViewportSize(DESKTOP);
    }
  });

  it('the whole row opens the message, by mouse anywhere on it and by keyboard on its link', async () => {
    await go('#/orgs/acme/messages?template_id=invoice');
    await expectRows(1);
    // A real click on the subject cell (Playwright's own click would refuse: the link's box covers it, by design).
    const box = await rows().first().locator('td').nth(4).boundingBox();
    if (box === null) throw new Error('the subject cell is not shown');
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await page.waitForURL(new RegExp(`#/orgs/acme/messages/${ids.anna}$`));
    await go('#/orgs/acme/messages?template_id=invoice');
    await expectRows(1);
    await rows().first().getByRole('link').focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`#/orgs/acme/messages/${ids.anna}$`));
  });

  it('Export CSV downloads the filtered list with the session cookie', async () => {
    await go('#/orgs/acme/messages?subject=order');
    await expectRows(2);
    const link = page.getByRole('link', { name: 'Export CSV' });
    expect(await link.getAttribute('href')).toContain('/admin/v1/organizations/acme/messages/export.csv?subject=order');
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toMatch(/^mailroom-messages-acme-\d{4}-\d{2}-\d{2}\.csv$/);
    const lines = fs
      .readFileSync(await download.path(), 'utf8')
      .trimEnd()
      .split('\r\n');
    expect(lines[0]).toBe('message_id,created_at,status,mode,template_id,service_id,subject,to,sent_at,retrying');
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual([ids.zoe, ids.ada]);
    expect(lines[1]).toContain('"Your order, Zoë"');
  });

  it('auto-refresh, off by default, shows a new message within 10 s and is remembered', async () => {
    await go('#/orgs/acme/messages');
    await expectRows(3);
    const toggle = page.getByRole('checkbox', { name: 'Auto-refresh (10 s)' });
    expect(await toggle.isChecked()).toBe(false);
    await toggle.check();
    ids.late = (await sendWith(ui, KEY, 'order', { name: 'Late' })).message_id;
    await vi.waitFor(async () => expect(await rows().count()).toBe(4), { timeout: 15_000, interval: 250 });
    expect(await rows().first().textContent()).toContain('Your order, Late');
    await page.reload();
    expect(await page.getByRole('checkbox', { name: 'Auto-refresh (10 s)' }).isChecked()).toBe(true);
    await page.getByRole('checkbox', { name: 'Auto-refresh (10 s)' }).uncheck();
  }, 60_000);
});
