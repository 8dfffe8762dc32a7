import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../src/config/env.js';
import { systemClock } from '../../../src/domain/clock.js';
import { newId } from '../../../src/domain/ids.js';
import type { MessageStatus } from '../../../src/domain/types.js';
import { chromiumAvailable } from '../../support/browser.js';
import { insertMessage, setMessageFields } from '../../support/db.js';
import { openTestStore } from '../../support/stores.js';
import { closeUi, DESKTOP, expectNoSeriousA11yViolations, openUi, PHONE, shots, signIn } from '../../support/ui/page.js';
import { seedAcmeWithRelay, startUiServer, type UiServer } from '../../support/ui/server.js';

/**
 * Issue 29 in the operator UI, "Rates": the overview shows delivery, bounce and complaint rates
 * over the range and per UTC day, each with its numerator and denominator, and each day and
 * figure links to the Messages page filtered to that day (and its statuses). Messages of several
 * days are written into the server's database (worker off: nothing moves them), test ones
 * among them that the live rates never count. Checked with axe, shot at both widths, and for no
 * sideways scroll at 390 px.
 */
const DAY = 86_400_000;
const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe.skipIf(!chromiumAvailable('the overview rates E2E test'))('operator UI: the overview rates', () => {
  let ui: UiServer;
  let page: Page;
  const now = Date.now();
  const today = date(now);
  const yesterday = date(now - DAY);
  const go = (hash: string) => page.goto(`${ui.baseUrl}/ui/${hash}`);
  /** Each cell's text as seen: without the links' visually hidden context (" bounced on …", "Messages of "). */
  const seen = async (cells: ReturnType<Page['locator']>): Promise<string[]> => {
    const out: string[] = [];
    for (const cell of await cells.all()) {
      let text = (await cell.textContent()) ?? '';
      for (const hidden of await cell.locator('.visually-hidden').allTextContents()) text = text.replace(hidden, '');
      out.push(text.trim());
    }
    return out;
  };
  const rows = () => page.getByRole('table', { name: 'Messages, newest first' }).locator('tbody tr');

  beforeAll(async () => {
    ui = await startUiServer({ smtp: true, worker: false });
    await seedAcmeWithRelay(ui);
    const url = loadConfig({ MAILROOM_DATA_DIR: ui.dataDir, MAILROOM_LOG_LEVEL: 'warn' }).databaseUrl;
    const store = await openTestStore(url, systemClock);
    try {
      const add = async (status: MessageStatus, at: number, n: number, mode: 'live' | 'test' = 'live') => {
        for (let i = 0; i < n; i++) {
          const id = newId('msg');
          await insertMessage(store, 'acme', id, status, at - i * 1000, mode === 'live', 'relay');
          if (mode === 'test') await setMessageFields(store, id, { mode: 'test' });
        }
      };
      // Today: 48 sent (40 delivered, 1 complained, 2 bounced, 5 without a report), 1 failed.
      await add('delivered', now, 40);
      await add('complained', now, 1);
      await add('bounced', now, 2);
      await add('sent', now, 5);
      await add('failed', now, 1);
      // Yesterday: 21 sent, 1 bounced.
      await add('delivered', now - DAY, 20);
      await add('bounced', now - DAY, 1);
      // Three days ago: held only, nothing sent (every rate "—").
      await add('held', now - 3 * DAY, 2);
      // 8 to 20 days ago, one delivered a day: 16 days with messages in 30 days.
      for (let k = 8; k <= 20; k++) await add('delivered', now - k * DAY, 1);
      // Test messages: never in the live rates.
      await add('bounced', now, 5, 'test');
    } finally {
      await store.close();
    }
    page = await openUi(ui.baseUrl, { cleanup: ui.cleanup, viewport: DESKTOP });
    await signIn(page, ui.baseUrl, ui.token);
  }, 120_000);

  afterAll(async () => {
    if (page !== undefined) await closeUi(page);
    await ui?.stop();
  });

  const section = () => page.getByRole('region', { name: 'Delivery, bounce and complaint rates, last 7 days' });
  const table = () => section().getByRole('table', { name: 'Rates per UTC day, newest first' });

  it('shows the range and each day with its numerator and denominator, live only', async () => {
    await go('#/orgs/acme');
    await table().waitFor();
    const card = (name: string) => section().locator('.card', { has: page.getByRole('heading', { name, exact: true }) });
    // 61 delivered (a complaint counts as delivered) of 69 sent; 3 bounced; 1 complaint of 61 delivered.
    expect(await card('Delivery rate').locator('.stat').textContent()).toBe('88.4%');
    expect(await card('Delivery rate').locator('.hint').textContent()).toBe('61 delivered of 69 sent');
    expect(await card('Bounce rate').locator('.stat').textContent()).toBe('4.3%');
    expect(await card('Bounce rate').locator('.hint').textContent()).toBe('3 bounced of 69 sent');
    expect(await card('Complaint rate').locator('.stat').textContent()).toBe('1.6%');
    expect(await card('Complaint rate').locator('.hint').textContent()).toBe('1 complained of 61 delivered');

    // Newest first; the days with no message are left out, the held-only day stays with dashes.
    const body = table().locator('tbody tr');
    expect(await seen(body.locator('th'))).toEqual([today, yesterday, date(now - 3 * DAY)]);
    expect(await seen(body.nth(0).locator('td'))).toEqual(['48', '85.4% (41 of 48)', '4.2% (2 of 48)', '2.4% (1 of 41)']);
    expect(await seen(body.nth(1).locator('td'))).toEqual(['21', '95.2% (20 of 21)', '4.8% (1 of 21)', '0% (0 of 20)']);
    expect(await seen(body.nth(2).locator('td'))).toEqual(['0', '—', '—', '—']);
    expect(await page.getByText('4 days with no messages are left out.').count()).toBe(1);
    expect(await page.getByText('NaN').count()).toBe(0);

    await shots(page, 'overview-rates', 'section[aria-label^="Delivery, bounce"]');
    await expectNoSeriousA11yViolations(page);
  });

  it('fits a phone: no sideways scroll at 390 px, the table a list', async () => {
    await page.setViewportSize(PHONE);
    try {
      await go('#/orgs/acme');
      await table().waitFor();
      const width = await page.evaluate('document.documentElement.scrollWidth');
      expect(width).toBeLessThanOrEqual(PHONE.width);
      await expectNoSeriousA11yViolations(page);
    } finally {
      await page.setViewportSize(DESKTOP);
    }
  });

  it("a day's rate links to that day's messages of its status, the day to all of them", async () => {
    await go('#/orgs/acme');
    await table()
      .getByRole('link', { name: `4.2% (2 of 48) bounced on ${today}` })
      .click();
    await page.waitForURL(new RegExp(`status=bounced&from=${today}&to=${today}`));
    await vi.waitFor(async () => expect(await rows().count()).toBe(2), { timeout: 10_000 });
    expect(await page.getByLabel('From (UTC day)').inputValue()).toBe(today);
    expect(await page.getByRole('checkbox', { name: 'bounced' }).isChecked()).toBe(true);

    await go('#/orgs/acme');
    await table()
      .getByRole('link', { name: `Messages of ${yesterday}` })
      .click();
    await page.waitForURL(new RegExp(`from=${yesterday}&to=${yesterday}$`));
    await vi.waitFor(async () => expect(await rows().count()).toBe(21), { timeout: 10_000 });
    await shots(page, 'overview-rates-day-messages');
    await expectNoSeriousA11yViolations(page);
  });

  it('shows the newest 14 days of a longer range until asked for all', async () => {
    await go('#/orgs/acme?days=30');
    const rates = page.getByRole('region', { name: 'Delivery, bounce and complaint rates, last 30 days' });
    const body = rates.getByRole('table', { name: 'Rates per UTC day, newest first' }).locator('tbody tr');
    await body.first().waitFor();
    expect(await body.count()).toBe(14);
    await rates.getByRole('button', { name: 'Show all 16 days' }).click();
    expect(await body.count()).toBe(16);
    expect(await seen(body.last().locator('th'))).toEqual([date(now - 20 * DAY)]);
    expect(await rates.getByText('14 days with no messages are left out.').count()).toBe(1);
    await expectNoSeriousA11yViolations(page);
    await rates.getByRole('button', { name: 'Show the latest 14 days only' }).click();
    expect(await body.count()).toBe(14);
  });

  it('counts test messages under Test alone', async () => {
    await go('#/orgs/acme?mode=test');
    await table().waitFor();
    expect(await seen(table().locator('tbody tr').nth(0).locator('td'))).toEqual(['5', '0% (0 of 5)', '100% (5 of 5)', '—']);
    // Its links stay in test mode.
    const href = await table()
      .getByRole('link', { name: `100% (5 of 5) bounced on ${today}` })
      .getAttribute('href');
    expect(href).toContain('mode=test');
  });
});
