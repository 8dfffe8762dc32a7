import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable } from '../../support/browser.js';
import { waitFor } from '../../support/smtp-sink.js';
import { closeUi, DESKTOP, expectNoSeriousA11yViolations, openUi, shots, signIn } from '../../support/ui/page.js';
import { sendWith, templateBody } from '../../support/ui/seed.js';
import { seedAcmeWithRelay, startUiServer, type UiServer } from '../../support/ui/server.js';
import { startReceiver } from '../../support/webhooks/receiver.js';

/**
 * Issue 29, message detail: the message page's HTML / Text / Headers / Raw source tabs (real ARIA
 * tabs, arrow keys, the selected tab in the hash so a link opens it), the .eml download from the
 * admin API's raw route, each recipient's state in words, and the message's webhook deliveries,
 * each linked to its delivery's page. The message is an attacker's: its subject, text and HTML
 * hold `<script>` and `</pre><img onerror>`, which show as text and run nothing.
 */

const KEY = 'sk_message_tabs_e2e_0123456789';
/** Closes the raw source's <pre> and the header cell, then tries to run script three ways. */
const ATTACK = '</pre></td><img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';

describe.skipIf(!chromiumAvailable('the message detail tabs E2E test'))('operator UI: a message page in tabs', () => {
  let ui: UiServer;
  let page: Page;
  let id = '';
  let headerMessageId = '';
  const go = (hash: string) => page.goto(`${ui.baseUrl}/ui/${hash}`);
  const tab = (name: string) => page.getByRole('tablist', { name: 'Message content' }).getByRole('tab', { name });
  const selectedTab = () => page.locator('[role="tab"][aria-selected="true"]').textContent();
  const visiblePanel = () => page.locator('[role="tabpanel"]:not([hidden])');
  const pwned = () => page.evaluate('window.__pwned');

  beforeAll(async () => {
    ui = await startUiServer({ smtp: true });
    await seedAcmeWithRelay(ui);
    const receiver = await startReceiver([], ui.cleanup);
    const key = await ui.admin('POST', '/organizations/acme/keys', { type: 'private', key: KEY });
    expect(key.status, JSON.stringify(key.body)).toBe(201);
    const endpoint = await ui.admin('POST', '/organizations/acme/webhooks', { url: receiver.url, description: 'CRM' });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
    receiver.secrets.push(String((endpoint.body as { secret: string }).secret));
    const evil = templateBody('ada@example.com', 'Order {{name}}', {
      text: 'Hello {{{name}}}, your order has shipped.',
      html: '<h1>Hello {{name}}</h1><script>parent.__pwned=3</script><img src=x onerror="parent.__pwned=4">',
    });
    const template = await ui.admin('PUT', '/organizations/acme/templates/evil', evil);
    expect(template.status, JSON.stringify(template.body)).toBe(201);
    id = (await sendWith(ui, KEY, 'evil', { name: ATTACK })).message_id;
    const detail = async () =>
      (await ui.admin('GET', `/organizations/acme/messages/${id}`)).body as { events: Array<{ type: string }> };
    await waitFor(async () => (await detail()).events.some((e) => e.type === 'sent'), 20_000, 'the message sent');
    const deliveries = async () =>
      (
        (await ui.admin('GET', `/organizations/acme/webhooks/deliveries?message_id=${id}`)).body as {
          items: Array<{ state: string }>;
        }
      ).items;
    await waitFor(async () => (await deliveries()).some((d) => d.state === 'succeeded'), 20_000, 'a webhook delivery');
    const raw = await fetch(`${ui.baseUrl}/admin/v1/organizations/acme/messages/${id}/raw`, {
      headers: { authorization: `Bearer ${ui.token}` },
    });
    headerMessageId = /^Message-ID: (.*)$/im.exec(await raw.text())?.[1]?.trim() ?? '';
    expect(headerMessageId).toMatch(/^<.+@.+>$/);
    page = await openUi(ui.baseUrl, { cleanup: ui.cleanup, viewport: DESKTOP });
    page.setDefaultTimeout(10_000);
    await signIn(page, ui.baseUrl, ui.token);
  }, 120_000);

  afterAll(async () => {
    if (page !== undefined) await closeUi(page);
    await ui?.stop();
  });

  it('opens on HTML; the tabs are ARIA tabs that arrow keys move through, the choice kept in the hash', async () => {
    await go(`#/orgs/acme/messages/${id}`);
    await tab('HTML').waitFor();
    expect(await page.getByRole('tablist', { name: 'Message content' }).getByRole('tab').allTextContents()).toEqual([
      'HTML',
      'Text',
      'Headers',
      'Raw source',
    ]);
    expect(await selectedTab()).toBe('HTML');
    const panel = visiblePanel();
    expect(await panel.getAttribute('aria-labelledby')).toBe(await tab('HTML').getAttribute('id'));
    expect(await tab('HTML').getAttribute('aria-controls')).toBe(await panel.getAttribute('id'));
    expect(await panel.locator('iframe.message-html').getAttribute('sandbox')).toBe('');
    expect(await page.frameLocator('iframe.message-html').locator('h1').textContent()).toContain('<img src=x');
    // Roving tabindex: only the selected tab is in the Tab order.
    expect(await page.locator('[role="tab"][tabindex="0"]').count()).toBe(1);

    await tab('HTML').focus();
    await page.keyboard.press('ArrowRight');
    expect(await selectedTab()).toBe('Text');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Text');
    expect(new URL(page.url()).hash).toBe(`#/orgs/acme/messages/${id}?tab=text`);
    expect(await visiblePanel().getByRole('region', { name: 'Text part' }).textContent()).toContain(`Hello ${ATTACK}`);
    await page.keyboard.press('End');
    expect(await selectedTab()).toBe('Raw source');
    expect(new URL(page.url()).hash).toBe(`#/orgs/acme/messages/${id}?tab=raw`);
    await page.keyboard.press('ArrowRight');
    expect(await selectedTab()).toBe('HTML');
    expect(new URL(page.url()).hash).toBe(`#/orgs/acme/messages/${id}`);
    await page.keyboard.press('ArrowLeft');
    expect(await selectedTab()).toBe('Raw source');
    await page.keyboard.press('Home');
    expect(await selectedTab()).toBe('HTML');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    expect(await selectedTab()).toBe('Headers');
    // Tab leaves the tablist for the panel's content.
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.getAttribute("role")')).toBe('tabpanel');
    expect(await pwned()).toBeUndefined();
  });

  it('Headers: the composed header fields in order, decoded, as text', async () => {
    await go(`#/orgs/acme/messages/${id}?tab=headers`);
    const table = page.getByRole('table', { name: 'Header fields, in order' });
    await table.waitFor();
    expect(await selectedTab()).toBe('Headers');
    const value = (name: string) => table.locator('tr', { has: page.locator(`th:text-is("${name}")`) }).locator('td');
    expect(await value('Message-ID').textContent()).toBe(headerMessageId);
    expect(await value('Subject').textContent()).toBe(`Order ${ATTACK}`);
    const names = await table.locator('tbody th').allTextContents();
    expect(names.indexOf('Message-ID')).toBeGreaterThan(-1);
    expect(names.map((n) => n.toLowerCase())).not.toContain('bcc');
    expect(await page.locator('main img').count()).toBe(0);
    expect(await pwned()).toBeUndefined();
    await expectNoSeriousA11yViolations(page);
    await shots(page, 'message-detail-headers');
  });

  it('Raw source: the .eml as text, deep-linked, with the download of the admin raw route', async () => {
    await go(`#/orgs/acme/messages/${id}?tab=raw`);
    const pre = page.getByRole('region', { name: 'Raw source' });
    await pre.waitFor();
    expect(await selectedTab()).toBe('Raw source');
    const text = (await pre.textContent()) ?? '';
    expect(text).toContain(`Message-ID: ${headerMessageId}`);
    expect(text).toContain('Content-Type: multipart/alternative');
    // The composed text part carries the attack as written (quoted-printable may fold it): it is text in the <pre>.
    expect(text).toMatch(/<script>|&lt;script&gt;|3Cscript/);
    expect(await pre.evaluate((el) => el.children.length)).toBe(0);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.getByText('Cut: the first 256 KiB').count()).toBe(0);

    const link = page.getByRole('link', { name: 'Download .eml' });
    expect(await link.getAttribute('href')).toBe(`${ui.baseUrl}/admin/v1/organizations/acme/messages/${id}/raw`);
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toBe(`${id}.eml`);
    const saved = fs.readFileSync(await download.path());
    expect(saved.toString('utf8')).toBe(text);
    expect(await pwned()).toBeUndefined();
    await expectNoSeriousA11yViolations(page);
    await shots(page, 'message-detail-raw');
  });

  it("lists each recipient's state in words and links each webhook delivery to its page", async () => {
    await go(`#/orgs/acme/messages/${id}`);
    const recipients = page.getByRole('list', { name: 'Recipients and their delivery state' });
    await recipients.waitFor();
    const ada = recipients.locator('li', { hasText: 'ada@example.com' });
    expect(await ada.locator('.badge').textContent()).toMatch(/^(sent|delivered)$/);
    expect(await ada.textContent()).toContain('accepted it for this address');
    await page.frameLocator('iframe.message-html').locator('h1').waitFor();
    await expectNoSeriousA11yViolations(page);
    await shots(page, 'message-detail', 'iframe.message-html');

    const deliveries = page.getByRole('table', { name: 'Webhook deliveries of this message, newest first' });
    await deliveries.locator('tbody a').first().waitFor();
    const first = deliveries.locator('tbody tr').first();
    const event = (await first.locator('code').textContent()) ?? '';
    expect(event).toMatch(/^message\./);
    await first.getByRole('link', { name: event }).click();
    await page.getByRole('heading', { level: 1, name: /^Webhook delivery whd_/ }).waitFor();
    expect(page.url()).toMatch(/#\/orgs\/acme\/webhooks\/[^/]+\/deliveries\/whd_/);
    expect(await page.getByRole('region', { name: 'Delivery' }).textContent()).toContain(event);
    await page.getByRole('table', { name: /^Attempts of delivery/ }).waitFor();
    await expectNoSeriousA11yViolations(page);
    await shots(page, 'webhook-delivery');
    await page.getByRole('region', { name: 'Delivery' }).getByRole('link', { name: id }).click();
    await page.getByRole('heading', { level: 1, name: `Message ${id}` }).waitFor();
    expect(await pwned()).toBeUndefined();
  });
});
