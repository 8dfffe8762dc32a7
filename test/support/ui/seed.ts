import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { orgBody } from '../admin.js';
import type { UiServer } from './server.js';

/**
 * An organization with something on every screen, for tests that look at all of them (the phone
 * width test): templates, messages (sent, one held, one to a long address), services, keys
 * (private, public, test), suppressions and a block-list entry, a webhook endpoint with
 * deliveries, a captured test message. Start the server with `smtp: true`.
 */

export const LONG_ADDRESS =
  'averyveryverylongrecipientnameforphonewidthlayouts@mail.example-company-with-a-long-name.example.com';
export const LONG_SUBJECT = 'Your order confirmation and the shipping details for order number 1234567890123456789';
const PRIVATE_KEY = 'sk_every_screen_e2e_0123456789';

export interface EveryScreen {
  org: string;
  sent: string;
  long: string;
  held: string;
  captured: string;
  webhook: string;
}

const template = (to: string, subject: string) => ({
  subject,
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

/** A loopback webhook receiver answering 200 `thanks`, closed with the server. */
async function startReceiver(ui: UiServer): Promise<string> {
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks'));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  ui.cleanup.defer(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
  return `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/mailroom`;
}

/** Waits for a condition (20 s), naming it and printing the server's output if it never holds. */
async function until(ui: UiServer, ok: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not happen within 20 s:\n${ui.output()}`);
}

async function created(reply: Promise<{ status: number; body: unknown }>): Promise<Record<string, unknown>> {
  const r = await reply;
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  return r.body as Record<string, unknown>;
}

/**
 * Seeds organization `acme`. Credits make the held message: the organization starts with 2, which
 * the first two sends take, so the third is held. The test key's send is captured, free.
 */
export async function seedEveryScreen(ui: UiServer): Promise<EveryScreen> {
  const org = 'acme';
  const receiverUrl = await startReceiver(ui);
  const base = `/organizations/${org}`;
  await created(
    ui.admin('PUT', base, orgBody({ name: 'Acme Corporation', plan: 'pro', credits: 2, when_out_of_credits: 'hold' })),
  );
  await created(
    ui.admin('PUT', `${base}/services/relay`, {
      provider: 'smtp',
      default: true,
      from_email: 'shop@example.com',
      from_name: 'Shop',
      smtp: { host: '127.0.0.1', port: ui.smtp?.port },
    }),
  );
  await created(
    ui.admin('PUT', `${base}/services/backup`, { provider: 'outbox', default: false, from_email: 'shop@example.com' }),
  );
  const webhook = String((await created(ui.admin('POST', `${base}/webhooks`, { url: receiverUrl, description: 'CRM' }))).id);
  await created(ui.admin('POST', `${base}/keys`, { type: 'private', key: PRIVATE_KEY }));
  await created(ui.admin('POST', `${base}/keys`, { type: 'public' }));
  const testKey = String((await created(ui.admin('POST', `${base}/keys`, { type: 'private', mode: 'test' }))).key);
  await created(ui.admin('PUT', `${base}/templates/welcome`, template('ada@example.com', 'Welcome, {{name}}')));
  await created(ui.admin('PUT', `${base}/templates/long`, template(LONG_ADDRESS, LONG_SUBJECT)));
  await created(ui.admin('POST', `${base}/suppressions`, { email: 'gone@example.com', reason: 'manual' }));
  await created(ui.admin('POST', `${base}/suppressions`, { email: LONG_ADDRESS.replace('avery', 'another'), reason: 'manual' }));
  await created(ui.admin('POST', `${base}/block-list`, { value: 'spam@example.net' }));

  const send = async (key: string, templateId: string, expected = 'queued'): Promise<string> => {
    const res = await fetch(`${ui.baseUrl}/v1/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ template_id: templateId, template_params: { name: 'Ada' } }),
    });
    const body = (await res.json()) as { message_id: string; status: string };
    expect(res.status, JSON.stringify(body)).toBe(202);
    expect(body.status, `${templateId}: ${JSON.stringify(body)}`).toBe(expected);
    return body.message_id;
  };
  const sent = await send(PRIVATE_KEY, 'welcome');
  const long = await send(PRIVATE_KEY, 'long');
  const held = await send(PRIVATE_KEY, 'welcome', 'held');
  const captured = await send(testKey, 'long');
  await created(ui.admin('POST', `${base}/webhooks/${webhook}/test`));

  const events = async (id: string) =>
    (((await ui.admin('GET', `${base}/messages/${id}`)).body as { events?: Array<{ type: string }> }).events ?? []).map(
      (e) => e.type,
    );
  await until(ui, async () => (await events(sent)).includes('sent') && (await events(long)).includes('sent'), 'both sends');
  const deliveries = async () =>
    ((await ui.admin('GET', `${base}/webhooks/${webhook}/deliveries`)).body as { items?: Array<{ state: string }> }).items ?? [];
  await until(
    ui,
    async () => (await deliveries()).filter((d) => d.state === 'succeeded').length >= 3,
    'three webhook deliveries',
  );
  const inbox = async () => ((await ui.admin('GET', `${base}/test-inbox`)).body as { items?: unknown[] }).items ?? [];
  await until(ui, async () => (await inbox()).length === 1, 'the captured test message');
  return { org, sent, long, held, captured, webhook };
}
