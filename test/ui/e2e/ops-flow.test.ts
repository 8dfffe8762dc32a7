import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orgBody } from '../../support/admin.js';
import { smtpError } from '../../support/smtp-sink.js';
import { chromiumAvailable } from '../../support/browser.js';
import { closeUi, expectNoSeriousA11yViolations, openUi, shot, signIn } from '../../support/ui/page.js';
import { startUiServer, type UiServer } from '../../support/ui/server.js';

/**
 * Issue 15, operations: the messages list filtered by status, a message's timeline, cancelling a
 * queued message and releasing a held one (then seeing it sent to the SMTP sink); suppressions
 * (a hard bounce's entry, one added by hand, found by search, removed); a webhook endpoint on a
 * loopback receiver: a test event, a range replay and a replayed delivery in its log.
 *
 * Credits make the held message: the organization starts with 2. `bounce@` takes one and is
 * refused for good (a hard bounce: suppressed), `later@` takes the other and is refused for now
 * (deferred, back in the queue for 30 s), so `ada@` is held. Cancelling `later@` gives its
 * credit back, which the release of `ada@` takes.
 */
const PRIVATE_KEY = 'sk_ops_flow_e2e_0123456789';
interface Hook {
  headers: http.IncomingHttpHeaders;
  body: string;
}

describe.skipIf(!chromiumAvailable('the operations E2E test'))('operator UI: messages, suppressions, webhooks', () => {
  let ui: UiServer;
  let page: Page;
  let receiver: http.Server;
  let receiverUrl = '';
  const hooks: Hook[] = [];
  const ids: Record<'bounce' | 'later' | 'held', string> = { bounce: '', later: '', held: '' };
  const go = async (hash: string) => {
    await page.goto(`${ui.baseUrl}/ui/${hash}`);
  };
  /** POST /v1/send with the private key (the Pro plan's 20 a second: three sends are never limited). */
  const send = async (template: string): Promise<{ message_id: string; status: string }> => {
    const res = await fetch(`${ui.baseUrl}/v1/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${PRIVATE_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ template_id: template, template_params: { name: 'Ada' } }),
    });
    const body = (await res.json()) as { message_id: string; status: string };
    expect(res.status, JSON.stringify(body)).toBe(202);
    return body;
  };
  const eventsOf = async (id: string): Promise<string[]> => {
    const res = await ui.admin('GET', `/organizations/acme/messages/${id}`);
    return ((res.body as { events?: Array<{ type: string }> }).events ?? []).map((e) => e.type);
  };
  /** Waits for a condition outside a test (expect.poll works only inside one). */
  const until = async (ok: () => Promise<boolean>, what: string) => {
    for (let i = 0; i < 200; i++) {
      if (await ok()) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${what} did not happen within 20 s:\n${ui.output()}`);
  };
  const template = (to: string) => ({
    subject: 'Your order, {{name}}',
    text: 'Hello {{name}}, your order has shipped.',
    html: '<h1>Hello {{name}}</h1><p>Your order has shipped.</p>',
    to,
    from_email: 'shop@example.com',
    from_name: 'Shop',
    params: [{ name: 'name', type: 'string', required: true }],
    service_id: null,
    captcha: false,
    allow_dynamic_recipients: false,
    allow_attachments: false,
    strict_params: false,
    enforce_link_allowlist: false,
    frozen: false,
  });
  const statusBadge = () => page.getByRole('region', { name: 'Status' }).locator('.badge').first();

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => {
        body += d.toString();
      });
      req.on('end', () => {
        hooks.push({ headers: req.headers, body });
        res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/mailroom`;

    // Outside production a webhook may point at loopback (MAILROOM_WEBHOOK_ALLOW_PRIVATE is for production).
    ui = await startUiServer({
      smtp: {
        rcpt: (address) => {
          if (address === 'bounce@example.com') return smtpError(550, '5.1.1 <bounce@example.com>: no such user');
          if (address === 'later@example.com') return smtpError(451, '4.2.0 mailbox busy, try later');
          return undefined;
        },
      },
    });
    ui.cleanup.defer(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
    const org = await ui.admin(
      'PUT',
      '/organizations/acme',
      orgBody({ name: 'Acme', plan: 'pro', credits: 2, when_out_of_credits: 'hold' }),
    );
    expect(org.status, JSON.stringify(org.body)).toBe(201);
    const service = await ui.admin('PUT', '/organizations/acme/services/relay', {
      provider: 'smtp',
      default: true,
      from_email: 'shop@example.com',
      from_name: 'Shop',
      smtp: { host: '127.0.0.1', port: ui.smtp?.port },
    });
    expect(service.status, JSON.stringify(service.body)).toBe(201);
    const key = await ui.admin('POST', '/organizations/acme/keys', { type: 'private', key: PRIVATE_KEY });
    expect(key.status, JSON.stringify(key.body)).toBe(201);
    for (const [id, to] of [
      ['bouncy', 'bounce@example.com'],
      ['slow', 'later@example.com'],
      ['order', 'ada@example.com'],
    ] as const) {
      const t = await ui.admin('PUT', `/organizations/acme/templates/${id}`, template(to));
      expect(t.status, JSON.stringify(t.body)).toBe(201);
    }
    ids.bounce = (await send('bouncy')).message_id;
    ids.later = (await send('slow')).message_id;
    const held = await send('order');
    expect(held.status).toBe('held');
    ids.held = held.message_id;
    // The worker has tried both: one bounced for good, the other waits for its retry.
    await until(async () => (await eventsOf(ids.bounce)).includes('bounced'), 'the bounce');
    await until(async () => (await eventsOf(ids.later)).includes('deferred'), 'the deferral');

    page = await openUi(ui.baseUrl, { cleanup: ui.cleanup });
    page.on('dialog', (d) => void d.accept());
    await signIn(page, ui.baseUrl, ui.token);
  }, 90_000);

  afterAll(async () => {
    if (page !== undefined) await closeUi(page);
    await ui?.stop();
  });

  it('lists messages, filters them by status into the link, and pages', async () => {
    await go('#/orgs/acme/messages');
    const table = page.getByRole('table', { name: 'Messages, newest first' });
    await table.getByRole('link', { name: `message ${ids.held}` }).waitFor();
    expect(await table.locator('tbody tr').count()).toBe(3);

    await page.getByLabel('held', { exact: true }).check();
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/status=held/);
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1);
    expect(await table.locator('tbody tr').first().textContent()).toContain('ada@example.com');
    await shot(page, 'messages-filtered');
    await expectNoSeriousA11yViolations(page);
    // The filter is a link: opening it fresh shows the same view, the box still checked.
    await go('#/orgs/acme/messages?status=bounced,failed&q=BOUNCE@example.com');
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1);
    await table.getByRole('link', { name: `message ${ids.bounce}` }).waitFor();
    expect(await page.getByLabel('failed', { exact: true }).isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.waitForURL(/#\/orgs\/acme\/messages$/);
    await expect.poll(() => table.locator('tbody tr').count()).toBe(3);
    await shot(page, 'messages');
    // Pages of two: the next page has the third message, "First page" goes back.
    const shown = () => table.locator('tbody a').evaluateAll((links) => links.map((l) => l.getAttribute('href')));
    await go('#/orgs/acme/messages?limit=2');
    await expect.poll(() => table.locator('tbody tr').count()).toBe(2);
    const first = await shown();
    await page.getByRole('link', { name: 'Next page' }).click();
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1);
    const second = await shown();
    expect(new Set([...first, ...second]).size).toBe(3);
    expect(page.url()).toMatch(/cursor=.*limit=2|limit=2.*cursor=/);
    expect(await page.getByRole('link', { name: 'Next page' }).count()).toBe(0);
    await page.getByRole('link', { name: 'First page' }).click();
    await expect.poll(() => table.locator('tbody tr').count()).toBe(2);
    expect(await shown()).toEqual(first);
  });

  it("shows a message's timeline and content, cancels a queued one and releases a held one", async () => {
    await go(`#/orgs/acme/messages/${ids.later}`);
    const timeline = page.getByRole('list', { name: 'Timeline, oldest first' });
    await timeline.waitFor();
    expect(await timeline.textContent()).toContain('4.2.0 mailbox busy');
    expect(await page.locator('iframe.message-html').getAttribute('sandbox')).toBe('');
    expect(await page.frameLocator('iframe.message-html').locator('h1').textContent()).toBe('Hello Ada');
    await page.getByRole('button', { name: 'Cancel message' }).click();
    await page.getByText('Cancelled: the message is discarded now.').waitFor();
    await expect.poll(() => statusBadge().textContent()).toBe('discarded');
    expect(await timeline.locator('.timeline-discarded').count()).toBe(1);

    await go(`#/orgs/acme/messages/${ids.held}`);
    await page.getByRole('list', { name: 'Timeline, oldest first' }).locator('.timeline-held').waitFor();
    expect(await statusBadge().textContent()).toBe('held');
    await shot(page, 'message-held');
    await expectNoSeriousA11yViolations(page);
    await page.getByRole('button', { name: 'Release' }).click();
    await page.getByText('Released: the message is queued now.').waitFor();
    // The worker sends it: reload until the page says so.
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Reload' }).click();
          return statusBadge().textContent();
        },
        { timeout: 20_000 },
      )
      .toBe('sent');
    expect(ui.smtp?.received.some((r) => r.rcptTo.includes('ada@example.com'))).toBe(true);
    const types = await page.locator('.timeline-item .timeline-head .badge').allTextContents();
    expect(types).toEqual(expect.arrayContaining(['held', 'released', 'sending', 'sent']));
    expect(await page.getByRole('button', { name: 'Release' }).count()).toBe(0);
    // Chromium paints a frame only once it has been in view: scroll to it so the shot shows the HTML.
    await page.locator('iframe.message-html').scrollIntoViewIfNeeded();
    expect(await page.frameLocator('iframe.message-html').locator('h1').textContent()).toBe('Hello Ada');
    await shot(page, 'message-detail');
    await expectNoSeriousA11yViolations(page);
  });

  it('shows why an address is suppressed, adds one, finds it by search and removes it', async () => {
    await go('#/orgs/acme/suppressions');
    const table = page.getByRole('table', { name: 'Suppressed addresses' });
    const bounced = table.locator('tr', { hasText: 'bounce@example.com' });
    await bounced.waitFor();
    expect(await bounced.textContent()).toContain('Hard bounce');
    // …and from which message: a link to it.
    expect(await bounced.getByRole('link', { name: ids.bounce }).getAttribute('href')).toBe(`#/orgs/acme/messages/${ids.bounce}`);

    await page.getByLabel('Address to suppress').fill('Gone@Example.com');
    await page.getByLabel('Reason').selectOption('manual');
    await page.getByRole('button', { name: 'Add suppression' }).click();
    await page.getByText('gone@example.com is suppressed.').waitFor();
    await table.locator('tr', { hasText: 'gone@example.com' }).waitFor();

    const search = page.getByRole('searchbox', { name: 'Search suppressions' });
    await search.fill('gone');
    await search.press('Enter');
    await page.waitForURL(/q=gone/);
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1);
    expect(await table.locator('tbody tr').first().textContent()).toContain('Added by an operator');
    await shot(page, 'suppressions');
    await expectNoSeriousA11yViolations(page);

    await page.getByRole('button', { name: 'Remove gone@example.com' }).click();
    await page.getByText('gone@example.com is no longer suppressed.').waitFor();
    await page.getByText('No suppressed address contains "gone".').waitFor();
    const left = await ui.admin('GET', '/organizations/acme/suppressions');
    expect((left.body as { items: Array<{ email: string }> }).items.map((s) => s.email)).toEqual(['bounce@example.com']);

    await page.getByRole('link', { name: 'Block list' }).click();
    await page.getByLabel('Address or value to block').fill('spam@example.net');
    await page.getByRole('button', { name: 'Add to block list' }).click();
    await page.getByRole('table', { name: 'Block list' }).locator('tr', { hasText: 'spam@example.net' }).waitFor();
    await expectNoSeriousA11yViolations(page);
  });

  it('adds a webhook endpoint (secret shown once), sends a test event and shows it in the delivery log', async () => {
    await go('#/orgs/acme/webhooks');
    await page.getByText('No webhook endpoint yet.').waitFor();
    await page.getByLabel('URL').fill(receiverUrl);
    await page.getByLabel('All event types').uncheck();
    await page.getByLabel('message.sent').check();
    await page.getByLabel('message.bounced').check();
    await page.getByLabel('Description').fill('CRM');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    // The secret is read as it is shown (a name on <code> is not allowed, and would be read instead of it).
    const secret = page.getByText(/^whsec_/);
    await secret.waitFor();
    const secretValue = (await secret.textContent()) ?? '';
    expect(secretValue).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Copy the signing secret' }).waitFor();
    await shot(page, 'webhooks');
    await expectNoSeriousA11yViolations(page);

    const list = await ui.admin('GET', '/organizations/acme/webhooks');
    const endpoint = (list.body as { items: Array<{ id: string; events: string[]; description: string }> }).items[0];
    expect(endpoint).toMatchObject({ events: ['message.sent', 'message.bounced'], description: 'CRM' });
    await page
      .getByRole('table', { name: 'Webhook endpoints' })
      .getByRole('link', { name: endpoint?.id ?? '' })
      .click();
    await page.getByRole('heading', { name: `Webhook ${endpoint?.id ?? ''}` }).waitFor();
    // Shown once: the detail page has only its last characters.
    expect(await page.content()).not.toContain(secretValue);

    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText(/Test event delivered: HTTP 200/).waitFor();
    expect(hooks.some((h) => h.body.includes('"webhook.test"') && typeof h.headers['webhook-signature'] === 'string')).toBe(true);
    const log = page.getByRole('table', { name: 'Deliveries, newest first' });
    const row = log.locator('tr.delivery-row', { hasText: 'webhook.test' });
    await row.waitFor();
    expect(await row.locator('.badge').textContent()).toBe('succeeded');
    // One row per delivery (issue 29): its attempts open with the row's button.
    await row.getByRole('button', { name: /attempt.* of delivery whd_/ }).click();
    expect(await log.locator('table.attempts').first().textContent()).toContain('thanks');

    expect(await row.getByRole('button', { name: /^Replay/ }).count()).toBe(0);

    // A range replay sends the events the endpoint subscribes to but never got (it did not exist
    // yet): the held message's `sent` and the hard bounce.
    const local = (ms: number) => new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await page.getByLabel('Since (your local time)').fill(local(Date.now() - 3_600_000));
    await page.getByLabel('Until (your local time)').fill(local(Date.now() + 120_000));
    await page.getByLabel('Only deliveries that failed').uncheck();
    await page.getByRole('button', { name: 'Replay range' }).click();
    await page.getByText('2 deliveries queued.').waitFor();
    const sentRow = log.locator('tr.delivery-row', { hasText: 'message.sent' });
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Reload log' }).click();
          return (await sentRow.count()) === 1 ? sentRow.locator('.badge').textContent() : 'absent';
        },
        { timeout: 20_000 },
      )
      .toBe('succeeded');
    expect(await sentRow.getByRole('link', { name: ids.held }).count()).toBe(1);
    const sentIds = () => hooks.filter((h) => h.body.includes('"message.sent"')).map((h) => h.headers['webhook-id']);
    expect(sentIds()).toHaveLength(1);

    // Replay that delivery: the receiver gets it again, with the same webhook-id.
    await sentRow.getByRole('button', { name: /^Replay delivery/ }).click();
    await page.getByText(/queued again/).waitFor();
    await expect.poll(() => sentIds().length, { timeout: 20_000 }).toBe(2);
    expect(new Set(sentIds()).size).toBe(1);

    await page.getByLabel('Outcome').selectOption('failed');
    await page.waitForURL(/state=failed/);
    await page.getByText('No delivery matches.').waitFor();
    await page.getByLabel('Outcome').selectOption('');
    await row.waitFor();
    await shot(page, 'webhook-detail');
    await expectNoSeriousA11yViolations(page);
  });
});
