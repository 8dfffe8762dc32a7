import { expect } from 'vitest';
import { waitFor } from '../smtp-sink.js';
import { startReceiver } from '../webhooks/receiver.js';
import { seedAcmeWithRelay, type UiServer } from './server.js';

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
  /** A delivery of a message event (the `long` message's) to `webhook`. */
  delivery: string;
}

/**
 * A template's PUT body for the UI tests: `to`, `subject`, a text and an HTML part greeting
 * `{{name}}` (a required string), no service (the default), every option off. `overrides`
 * replaces fields (`html: undefined` leaves the HTML part out).
 */
export function templateBody(to: string, subject: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
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
    ...overrides,
  };
}

/** POST /v1/send with `key`: expects 202 and returns the message id and status (`name: 'Ada'` unless `params` says). */
export async function sendWith(
  ui: UiServer,
  key: string,
  templateId: string,
  params: Record<string, unknown> = { name: 'Ada' },
): Promise<{ message_id: string; status: string }> {
  const res = await fetch(`${ui.baseUrl}/v1/send`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ template_id: templateId, template_params: params }),
  });
  const body = (await res.json()) as { message_id: string; status: string };
  expect(res.status, JSON.stringify(body)).toBe(202);
  return body;
}

/** Waits for a condition (20 s), naming it and printing the server's output if it never holds. */
async function until(ui: UiServer, ok: () => Promise<boolean>, what: string): Promise<void> {
  try {
    await waitFor(ok, 20_000, what);
  } catch (err) {
    throw new Error(`${(err as Error).message}:\n${ui.output()}`);
  }
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
  // Signatures checked: the endpoint's secret is known once it is created (below).
  const receiver = await startReceiver([], ui.cleanup);
  const base = `/organizations/${org}`;
  await seedAcmeWithRelay(ui, {
    org: { name: 'Acme Corporation', plan: 'pro', credits: 2, when_out_of_credits: 'hold' },
    service: { from_email: 'shop@example.com', from_name: 'Shop' },
  });
  await created(
    ui.admin('PUT', `${base}/services/backup`, { provider: 'outbox', default: false, from_email: 'shop@example.com' }),
  );
  const endpoint = await created(ui.admin('POST', `${base}/webhooks`, { url: receiver.url, description: 'CRM' }));
  const webhook = String(endpoint.id);
  receiver.secrets.push(String(endpoint.secret));
  await created(ui.admin('POST', `${base}/keys`, { type: 'private', key: PRIVATE_KEY }));
  await created(ui.admin('POST', `${base}/keys`, { type: 'public' }));
  const testKey = String((await created(ui.admin('POST', `${base}/keys`, { type: 'private', mode: 'test' }))).key);
  await created(ui.admin('PUT', `${base}/templates/welcome`, templateBody('ada@example.com', 'Welcome, {{name}}')));
  await created(ui.admin('PUT', `${base}/templates/long`, templateBody(LONG_ADDRESS, LONG_SUBJECT)));
  await created(ui.admin('POST', `${base}/suppressions`, { email: 'gone@example.com', reason: 'manual' }));
  await created(ui.admin('POST', `${base}/suppressions`, { email: LONG_ADDRESS.replace('avery', 'another'), reason: 'manual' }));
  await created(ui.admin('POST', `${base}/block-list`, { value: 'spam@example.net' }));

  const send = async (key: string, templateId: string, expected = 'queued'): Promise<string> => {
    const body = await sendWith(ui, key, templateId);
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
  // Each one signed with the endpoint's secret (standardwebhooks, checked by the receiver).
  expect(receiver.received.length).toBeGreaterThanOrEqual(3);
  expect(receiver.received.filter((r) => r.verifiedWith.length === 0).map((r) => r.webhookId)).toEqual([]);
  const inbox = async () => ((await ui.admin('GET', `${base}/test-inbox`)).body as { items?: unknown[] }).items ?? [];
  await until(ui, async () => (await inbox()).length === 1, 'the captured test message');
  const ofLong = (await ui.admin('GET', `${base}/webhooks/deliveries?message_id=${long}`)).body as {
    items?: Array<{ id: string }>;
  };
  const delivery = ofLong.items?.[0]?.id ?? '';
  expect(delivery, 'a webhook delivery of the long message').not.toBe('');
  return { org, sent, long, held, captured, webhook, delivery };
}
