import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { chromiumAvailable } from '../../support/browser.js';
import { closeUi, DESKTOP, expectNoSeriousA11yViolations, openUi, shots, signIn } from '../../support/ui/page.js';
import { sendWith, templateBody } from '../../support/ui/seed.js';
import { seedAcmeWithRelay, startUiServer, type UiServer } from '../../support/ui/server.js';

/**
 * Issue 27 in the operator UI: a test key made on the Keys page (its "test" badge), sends with it
 * to a normal address and to the simulator's `delivered@`, which reach no relay; the messages
 * under the Test toggle and not under Live, the overview's test counts; the Test inbox: a
 * captured message in the sandboxed preview, its headers and timeline, the .eml download, and
 * emptying it. Every new screen is checked with axe and shot at desktop and phone sizes.
 */
const LIVE_KEY = 'sk_live_test_mode_e2e_0123456789';
const SIMULATOR = 'delivered@simulator.mailroom.test';

describe.skipIf(!chromiumAvailable('the test mode E2E test'))(
  'operator UI: test keys, the Live/Test toggle, the test inbox',
  () => {
    let ui: UiServer;
    let page: Page;
    let testKey = '';
    const ids: Record<'live' | 'ada' | 'simulated', string> = { live: '', ada: '', simulated: '' };
    const go = (hash: string) => page.goto(`${ui.baseUrl}/ui/${hash}`);
    const send = async (key: string, template: string): Promise<string> => (await sendWith(ui, key, template)).message_id;
    const eventsOf = async (id: string): Promise<string[]> => {
      const res = await ui.admin('GET', `/organizations/acme/messages/${id}`);
      return ((res.body as { events?: Array<{ type: string }> }).events ?? []).map((e) => e.type);
    };
    const template = (to: string) =>
      templateBody(to, 'Your order, {{name}}', {
        html: '<h1>Hello {{name}}</h1><p>Your order has shipped.</p><img src="https://tracker.example/p.gif" alt="">',
      });
    const rows = (name: string) => page.getByRole('table', { name }).locator('tbody tr');

    beforeAll(async () => {
      ui = await startUiServer({ smtp: true });
      await seedAcmeWithRelay(ui);
      const key = await ui.admin('POST', '/organizations/acme/keys', { type: 'private', key: LIVE_KEY });
      expect(key.status, JSON.stringify(key.body)).toBe(201);
      for (const [id, to] of [
        ['order', 'ada@example.com'],
        ['ping', SIMULATOR],
      ] as const) {
        const t = await ui.admin('PUT', `/organizations/acme/templates/${id}`, template(to));
        expect(t.status, JSON.stringify(t.body)).toBe(201);
      }
      // One live message, delivered to the sink: the Live view's only row.
      ids.live = await send(LIVE_KEY, 'order');
      await vi.waitFor(() => expect(ui.smtp?.received.length).toBe(1), { timeout: 20_000, interval: 100 });
      page = await openUi(ui.baseUrl, { cleanup: ui.cleanup, viewport: DESKTOP });
      page.on('dialog', (d) => void d.accept());
      await signIn(page, ui.baseUrl, ui.token);
    }, 90_000);

    afterAll(async () => {
      if (page !== undefined) await closeUi(page);
      await ui?.stop();
    });

    it('creates a test key on the Keys page and marks it "test" in the table', async () => {
      await go('#/orgs/acme/keys');
      await page.getByLabel('Type').selectOption('private');
      await page.getByLabel('Mode', { exact: true }).selectOption('test');
      await page.getByText('messages land in the Test inbox').waitFor();
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByText('it will not be shown again').waitFor();
      testKey = (await page.locator('.notice code').first().textContent()) ?? '';
      expect(testKey).toMatch(/^sk_test_/);
      const listed = await ui.admin('GET', '/organizations/acme/keys');
      const keys = (listed.body as { items: Array<{ id: string; mode: string; status: string }> }).items;
      const made = keys.filter((k) => k.mode === 'test');
      expect(made).toHaveLength(1);
      const table = page.getByRole('table', { name: 'Keys' });
      const modeCell = (row: ReturnType<typeof table.locator>) => row.locator('td').nth(2);
      expect(await table.locator('th', { hasText: 'Mode' }).first().textContent()).toBe('Mode');
      const row = table.locator('tr', { hasText: made[0]?.id ?? '?' });
      expect(await row.locator('.badge-test').textContent()).toBe('test');
      expect(await modeCell(row).textContent()).toBe('test');
      // The live key's row (found by its id: the table shows a hint, never the key) has no such badge,
      // and shows its mode the same way, as a badge.
      const liveKeys = keys.filter((k) => k.mode === 'live');
      expect(liveKeys).toHaveLength(1);
      const live = table.locator('tr', { hasText: liveKeys[0]?.id ?? '?' });
      expect(await live.count()).toBe(1);
      expect(await live.locator('.badge-test').count()).toBe(0);
      expect(await modeCell(live).locator('.badge-live').textContent()).toBe('live');
      await shots(page, 'test-mode-keys');
      await expectNoSeriousA11yViolations(page);
      await page.getByRole('button', { name: 'I have copied it' }).click();
    });

    it('sends with the test key: nothing reaches the relay, the simulator delivers', async () => {
      expect(testKey).toMatch(/^sk_test_/);
      ids.ada = await send(testKey, 'order');
      ids.simulated = await send(testKey, 'ping');
      await expect.poll(() => eventsOf(ids.simulated), { timeout: 20_000 }).toContain('delivered');
      await expect
        .poll(async () => (await ui.admin('GET', `/organizations/acme/messages/${ids.ada}`)).body)
        .toMatchObject({
          mode: 'test',
        });
      // Only the live message ever reached the sink.
      expect(ui.smtp?.received.length).toBe(1);
      expect(ui.smtp?.received.flatMap((r) => r.rcptTo)).toEqual(['ada@example.com']);
    });

    it('shows test messages under the Test toggle only, with their badge', async () => {
      // Needs the sends above: an empty id would match every row's link name.
      expect(ids.ada).not.toBe('');
      await go('#/orgs/acme/messages');
      const live = page.getByRole('button', { name: 'Live', exact: true });
      await page.getByRole('link', { name: `message ${ids.live}` }).waitFor();
      expect(await live.getAttribute('aria-pressed')).toBe('true');
      expect(await rows('Messages, newest first').count()).toBe(1);
      expect(await page.getByRole('link', { name: `message ${ids.ada}` }).count()).toBe(0);
      expect(await page.locator('tbody .badge-test').count()).toBe(0);

      await page.getByRole('button', { name: 'Test', exact: true }).click();
      await page.waitForURL(/mode=test/);
      await page.getByRole('link', { name: `message ${ids.simulated}` }).waitFor();
      expect(await rows('Messages, newest first').count()).toBe(2);
      expect(await page.getByRole('link', { name: `message ${ids.live}` }).count()).toBe(0);
      // Every row is a test message: the title and the notice say so once, not a badge per row.
      await page.getByRole('heading', { name: 'Test messages', level: 1 }).waitFor();
      expect(await page.getByRole('status').filter({ hasText: 'Sent with a test key' }).textContent()).toContain(
        'instead of leaving this server',
      );
      expect(await page.getByText('never delivered').count()).toBe(0);
      expect(await page.locator('tbody .badge-test').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Test', exact: true }).getAttribute('aria-pressed')).toBe('true');
      // A filter keeps the mode in the link.
      await page.getByLabel('delivered', { exact: true }).check();
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.waitForURL(/status=delivered.*mode=test/);
      await expect.poll(() => rows('Messages, newest first').count()).toBe(1);
      await page.getByRole('link', { name: `message ${ids.simulated}` }).waitFor();
      await shots(page, 'test-mode-messages');
      await expectNoSeriousA11yViolations(page);

      await page.getByRole('link', { name: `message ${ids.simulated}` }).click();
      const status = page.getByRole('region', { name: 'Status' });
      await status.locator('.badge-test').waitFor();
      await page.getByText('A test message (sent with a test key)').waitFor();
      expect(await page.getByRole('link', { name: 'Test messages' }).getAttribute('href')).toBe('#/orgs/acme/messages?mode=test');
      await expectNoSeriousA11yViolations(page);
    });

    it('counts test messages apart on the overview', async () => {
      await go('#/orgs/acme');
      const chart = page.getByRole('img', { name: /Messages per day over 7 days/ });
      await chart.waitFor();
      expect(await chart.getAttribute('aria-label')).toContain('1 accepted');
      await page.getByRole('button', { name: '30 days' }).click();
      await page.getByRole('button', { name: 'Test', exact: true }).click();
      await page.waitForURL(/days=30&mode=test/);
      await page.getByRole('heading', { name: 'Test messages per day, last 30 days' }).waitFor();
      const tested = page.getByRole('img', { name: /over 30 days/ });
      await expect.poll(() => tested.getAttribute('aria-label')).toContain('2 accepted');
      expect(await tested.getAttribute('aria-label')).toContain('1 delivered');
      await shots(page, 'test-mode-overview');
      await expectNoSeriousA11yViolations(page);
      await page.getByRole('button', { name: 'Live', exact: true }).click();
      await page.waitForURL(/#\/orgs\/acme\?days=30$/);
      await expect.poll(() => page.getByRole('img', { name: /over 30 days/ }).getAttribute('aria-label')).toContain('1 accepted');
    });

    it('lists the test inbox, filters it and opens a captured message in the sandboxed preview', async () => {
      await go('#/orgs/acme');
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Test inbox' }).click();
      await page.getByRole('heading', { name: 'Test inbox' }).waitFor();
      await page.getByRole('link', { name: `captured message ${ids.ada}` }).waitFor();
      expect(await rows('Captured test messages, newest first').count()).toBe(2);
      await shots(page, 'test-inbox');
      await expectNoSeriousA11yViolations(page);

      await page.getByLabel('Recipient').fill('ada@example.com');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.waitForURL(/test-inbox\?to=ada%40example.com/);
      await expect.poll(() => rows('Captured test messages, newest first').count()).toBe(1);
      await page.getByRole('link', { name: `captured message ${ids.ada}` }).click();

      await page.getByRole('heading', { name: 'Your order, Ada' }).waitFor();
      const frame = page.locator('iframe.message-html');
      expect(await frame.getAttribute('sandbox')).toBe('');
      expect(await page.frameLocator('iframe.message-html').locator('h1').textContent()).toBe('Hello Ada');
      expect(await page.getByRole('region', { name: 'Text part' }).textContent()).toContain('Hello Ada, your order has shipped.');
      const headers = page.getByRole('table', { name: 'Header fields, in order' });
      expect(await headers.locator('tr', { hasText: 'Subject' }).first().textContent()).toContain('Your order, Ada');
      expect(await headers.locator('tr', { hasText: 'To' }).first().textContent()).toContain('ada@example.com');
      await page.getByRole('region', { name: 'Attachments' }).getByText('No attachments.').waitFor();
      await page.getByRole('list', { name: 'Timeline, oldest first' }).waitFor();
      expect(await page.getByRole('link', { name: 'Message page' }).getAttribute('href')).toBe(`#/orgs/acme/messages/${ids.ada}`);
      await shots(page, 'test-inbox-message', 'iframe.message-html');
      await expectNoSeriousA11yViolations(page);

      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('link', { name: 'Download .eml' }).click(),
      ]);
      expect(download.suggestedFilename()).toBe(`${ids.ada}.eml`);
      const eml = fs.readFileSync((await download.path()) ?? '', 'utf8');
      expect(eml).toMatch(/^[A-Za-z][A-Za-z0-9-]*: /);
      expect(eml).toContain('Subject: Your order, Ada');
      expect(eml).toContain('\r\n\r\n');
    });

    it('empties the inbox after a confirm and says how to fill it again', async () => {
      await go('#/orgs/acme/test-inbox');
      await page.getByRole('link', { name: `captured message ${ids.ada}` }).waitFor();
      await page.getByRole('button', { name: 'Empty inbox' }).click();
      const emptyCard = page.getByRole('region', { name: 'The test inbox is empty' });
      await emptyCard.getByRole('heading', { name: 'The test inbox is empty' }).waitFor();
      await emptyCard.getByText('Send with a test key').waitFor();
      // Said once: the card, no notice above it.
      expect(await page.getByText(/test inbox is empty/i).count()).toBe(1);
      const left = await ui.admin('GET', '/organizations/acme/test-inbox');
      expect((left.body as { items: unknown[] }).items).toEqual([]);
      expect(await page.getByRole('button', { name: 'Empty inbox' }).isDisabled()).toBe(true);
      await shots(page, 'test-inbox-empty');
      await expectNoSeriousA11yViolations(page);
      // The messages stay: their timelines are still under Messages, Test.
      expect((await eventsOf(ids.ada)).length).toBeGreaterThan(0);
    });

    it('after a new capture, Reload lists it and nothing says the inbox is empty', async () => {
      await page.getByRole('region', { name: 'The test inbox is empty' }).waitFor();
      const again = await send(testKey, 'order');
      await expect
        .poll(async () => ((await ui.admin('GET', '/organizations/acme/test-inbox')).body as { items: unknown[] }).items.length)
        .toBe(1);
      await page.getByRole('button', { name: 'Reload' }).click();
      await page.getByRole('link', { name: `captured message ${again}` }).waitFor();
      expect(await page.getByText(/test inbox is empty/i).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Empty inbox' }).isDisabled()).toBe(false);
    });
  },
);
