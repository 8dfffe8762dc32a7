import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable } from '../../support/browser.js';
import { waitFor } from '../../support/smtp-sink.js';
import { closeUi, DESKTOP, expectNoSeriousA11yViolations, openUi, PHONE, shots, signIn } from '../../support/ui/page.js';
import { sendWith, templateBody } from '../../support/ui/seed.js';
import { seedAcmeWithRelay, startUiServer, type UiServer } from '../../support/ui/server.js';

/**
 * Issue 29's webhooks in the operator UI: custom headers on the endpoint form (rows added and
 * removed, values write-only: a stored one renders empty and is kept on save, a refused name is
 * explained under its field), and the delivery log with one row per delivery whose button shows
 * each attempt, the headers it sent (custom values hidden) and the JSON body, as text. A
 * receiver behind basic auth checks the header arrives. Axe, both widths, no sideways scroll.
 */

const CREDENTIALS = `Basic ${Buffer.from('hook:ui-s3cret-77').toString('base64')}`;
/** The receiver's first answer to a message event: markup that must stay text on the page. */
const ATTACK = '</pre></td><img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
const KEY = 'sk_webhook_headers_e2e_0123456789';

interface Hit {
  authorization: string | undefined;
  body: string;
}

describe.skipIf(!chromiumAvailable('the webhook headers E2E test'))('operator UI: webhook headers and attempts', () => {
  let ui: UiServer;
  let page: Page;
  let receiverUrl = '';
  let endpointId = '';
  const hits: Hit[] = [];
  let failedOnce = false;
  const go = (hash: string) => page.goto(`${ui.baseUrl}/ui/${hash}`);
  const pwned = () => page.evaluate('window.__pwned');
  const overflow = async () => (await page.evaluate('document.documentElement.scrollWidth')) as number;

  beforeAll(async () => {
    ui = await startUiServer({ smtp: true, env: { MAILROOM_WEBHOOK_RETRY_SCHEDULE: '0,1,1' } });
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        hits.push({ authorization: req.headers.authorization, body });
        if (req.headers.authorization !== CREDENTIALS) return void res.writeHead(401).end('who are you?');
        if (body.includes('"message.queued"') && !failedOnce) {
          failedOnce = true;
          return void res.writeHead(503, { 'content-type': 'text/html' }).end(ATTACK);
        }
        res.writeHead(200).end('thanks');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    ui.cleanup.defer(() => new Promise<void>((resolve) => server.close(() => resolve())));
    receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    await seedAcmeWithRelay(ui);
    expect((await ui.admin('POST', '/organizations/acme/keys', { type: 'private', key: KEY })).status).toBe(201);
    const t = await ui.admin('PUT', '/organizations/acme/templates/order', templateBody('ada@example.com', 'Your order'));
    expect(t.status, JSON.stringify(t.body)).toBe(201);
    page = await openUi(ui.baseUrl, { cleanup: ui.cleanup, viewport: DESKTOP });
    await signIn(page, ui.baseUrl, ui.token);
  }, 90_000);

  afterAll(async () => {
    if (page !== undefined) await closeUi(page);
    await ui?.stop();
  });

  it('adds an endpoint with custom headers: rows added and removed, values write-only', async () => {
    await go('#/orgs/acme/webhooks');
    const form = page.getByRole('form', { name: 'Add endpoint' });
    await form.getByLabel('URL').fill(receiverUrl);
    await form.getByRole('button', { name: 'Add header' }).click();
    await form.getByRole('button', { name: 'Add header' }).click();
    await form.getByLabel('Header 1 name').fill('Authorization');
    await form.getByLabel('Header 1 value').fill(CREDENTIALS);
    await form.getByLabel('Header 2 name').fill('X-Temporary');
    await form.getByLabel('Header 2 value').fill('drop-me');
    expect(await form.getByLabel('Header 1 value').getAttribute('type')).toBe('password');
    await shots(page, 'webhook-headers-form');
    await expectNoSeriousA11yViolations(page);
    await form.getByRole('button', { name: 'Remove header 2 (X-Temporary)' }).click();
    expect(await form.getByLabel('Header 2 name').count()).toBe(0);
    await form.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByText(/^whsec_/).waitFor();
    const list = (await ui.admin('GET', '/organizations/acme/webhooks')).body as {
      items: Array<{ id: string; headers: Array<{ name: string; value: string }> }>;
    };
    endpointId = list.items[0]?.id ?? '';
    expect(list.items[0]?.headers).toEqual([{ name: 'Authorization', value: '********' }]);
  });

  it('edits it: the stored value stays unless retyped; a reserved name is explained under its field', async () => {
    await go(`#/orgs/acme/webhooks/${endpointId}`);
    const settings = page.getByRole('form', { name: 'Save endpoint' });
    const value = settings.getByLabel('Header 1 value');
    await value.waitFor();
    expect(await settings.getByLabel('Header 1 name').inputValue()).toBe('Authorization');
    expect(await value.inputValue()).toBe('');
    expect(await value.getAttribute('placeholder')).toBe('unchanged (write-only)');
    expect(await page.content()).not.toContain(CREDENTIALS.slice('Basic '.length));

    // Save unchanged: the mask goes back and the receiver still gets the credentials.
    await settings.getByLabel('Description').fill('Receiver behind basic auth');
    await settings.getByRole('button', { name: 'Save endpoint' }).click();
    await page.getByText('Saved.', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText(/Test event delivered: HTTP 200/).waitFor();
    expect(hits.at(-1)?.authorization).toBe(CREDENTIALS);

    await settings.getByRole('button', { name: 'Add header' }).click();
    await settings.getByLabel('Header 2 name').fill('Content-Type');
    await settings.getByLabel('Header 2 value').fill('text/plain');
    await settings.getByRole('button', { name: 'Save endpoint' }).click();
    await settings.getByText('"Content-Type" is always application/json: it cannot be set').waitFor();
    expect(await settings.getByLabel('Header 2 name').getAttribute('aria-invalid')).toBe('true');
    await shots(page, 'webhook-headers-refused', 'form[aria-label="Save endpoint"] fieldset.header-rows');
    await expectNoSeriousA11yViolations(page);
    await settings.getByRole('button', { name: 'Remove header 2 (Content-Type)' }).click();
  });

  it('lists one row per delivery; its button shows each attempt, the headers sent and the body', async () => {
    const { message_id } = await sendWith(ui, KEY, 'order');
    const deliveries = async () =>
      (
        (await ui.admin('GET', `/organizations/acme/webhooks/${endpointId}/deliveries?event_type=message.queued`)).body as {
          items: Array<{ id: string; state: string; attempts: number }>;
        }
      ).items;
    await waitFor(async () => (await deliveries())[0]?.state === 'succeeded', 20_000, 'the queued event delivered on retry');
    const queued = (await deliveries())[0];
    expect(queued?.attempts).toBe(2);
    await go(`#/orgs/acme/webhooks/${endpointId}?event_type=message.queued`);
    const log = page.getByRole('table', { name: 'Deliveries, newest first' });
    const row = log.locator('tr.delivery-row', { hasText: queued?.id ?? '?' });
    await row.waitFor();
    expect(await row.getByRole('link', { name: message_id }).count()).toBe(1);
    expect(await row.locator('td[data-label="Last result"]').textContent()).toBe('HTTP 200');
    // Collapsed: no attempt is in the page until the row is opened.
    expect(await log.locator('table.attempts').count()).toBe(0);
    const toggle = row.getByRole('button', { name: `2 attempts of delivery ${queued?.id}: show them and the request` });
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    await toggle.click();
    const open = row.getByRole('button', { name: /: hide them and the request$/ });
    expect(await open.getAttribute('aria-expanded')).toBe('true');
    const attempts = page.getByRole('table', { name: `Attempts of delivery ${queued?.id}` });
    await attempts.waitFor();
    const [first, second] = [attempts.locator('tbody tr').nth(0), attempts.locator('tbody tr').nth(1)];
    expect(await first.locator('td[data-label="Result"]').textContent()).toContain('HTTP 503');
    expect(await second.locator('td[data-label="Result"]').textContent()).toBe('HTTP 200');
    // The receiver's markup is text: shown as written, nothing of it run.
    expect(await first.locator('pre.excerpt').textContent()).toBe(ATTACK);
    expect(await pwned()).toBeUndefined();

    await second.getByText('Request headers').click();
    const sent = second.locator('details.sent-headers dl');
    expect(await sent.textContent()).toContain('webhook-signature');
    expect(await sent.locator('dt', { hasText: 'Authorization' }).count()).toBe(1);
    expect(await sent.textContent()).toContain('hidden (write-only)');
    const body = log.locator(`#attempts-${queued?.id} details.request-body`);
    await body.locator('summary').click();
    const pre = body.locator('pre');
    const received = hits.find((h) => h.body.includes('"message.queued"'))?.body ?? '{}';
    expect(await pre.textContent()).toBe(JSON.stringify(JSON.parse(received), null, 2));
    expect(await page.content()).not.toContain(CREDENTIALS.slice('Basic '.length));
    await expectNoSeriousA11yViolations(page);
    await shots(page, 'webhook-deliveries-expanded', `#attempts-${queued?.id}`);

    await open.click();
    expect(await log.locator('table.attempts').count()).toBe(0);
  });

  it('shows the request on the delivery page, and fits a phone without sideways scrolling', async () => {
    const items = (
      (await ui.admin('GET', `/organizations/acme/webhooks/${endpointId}/deliveries?event_type=message.queued`)).body as {
        items: Array<{ id: string }>;
      }
    ).items;
    await go(`#/orgs/acme/webhooks/${endpointId}/deliveries/${items[0]?.id}`);
    const request = page.getByRole('region', { name: 'Request' });
    await request.locator('pre.request-json').waitFor();
    expect(await request.locator('pre.request-json').textContent()).toContain('"type": "message.queued"');
    await expectNoSeriousA11yViolations(page);
    await shots(page, 'webhook-delivery-request', 'pre.request-json');
    await page.setViewportSize(PHONE);
    try {
      for (const hash of [
        `#/orgs/acme/webhooks/${endpointId}/deliveries/${items[0]?.id}`,
        `#/orgs/acme/webhooks/${endpointId}`,
      ]) {
        await go(hash);
        await page.getByRole('heading', { level: 1 }).waitFor();
        await page.locator('main table, main form').first().waitFor();
        const closed = page.getByRole('button', { name: /: show them and the request$/ });
        while ((await closed.count()) > 0) await closed.first().click();
        for (const summary of await page.locator('main details > summary:visible').all()) await summary.click();
        expect(await overflow(), hash).toBeLessThanOrEqual(PHONE.width);
      }
      await shots(page, 'webhook-detail-open');
      await expectNoSeriousA11yViolations(page);
    } finally {
      await page.setViewportSize(DESKTOP);
    }
  }, 60_000);
});
