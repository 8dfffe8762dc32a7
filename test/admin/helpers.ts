import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import type { MessageStatus } from '../../src/domain/types.js';
import type { Store } from '../../src/storage/store.js';
import { ADMIN_TOKEN, type TestApp } from '../support/app.js';
import { insertMessageRow } from '../support/db.js';

export { expectError, type ErrorBody } from '../support/http.js';

type Method = 'GET' | 'PUT' | 'PATCH' | 'POST' | 'DELETE';

/** One admin call with the right token (or `token`, or none when null). */
export function admin(
  t: TestApp, method: Method, path: string, body?: unknown, token: string | null = ADMIN_TOKEN,
): Promise<LightMyRequestResponse> {
  const options: InjectOptions = {
    method,
    url: `/admin/v1${path}`,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  };
  if (body !== undefined) options.payload = body as InjectOptions['payload'];
  return t.app.inject(options);
}

/** Every setting an organization PUT requires, at the values a new organization gets by default. */
export const DEFAULT_SECURITY_BODY = {
  require_private_key: false, allow_private_keys_in_browsers: false, allowed_origins: [] as string[], allow_mobile_apps: false,
  mobile_app_schemes: [] as string[], block_headless: false, ip_limit: { requests: 10, per_seconds: 60 }, recipient_daily_limit: 5,
  link_domains: [] as string[], block_list: { watch_variable: null as string | null }, public_overdraft: false,
};
export const ORG_SETTINGS = {
  name: 'Acme', plan: 'free', overdraft: 0, when_out_of_credits: 'hold', hold_queue_limit: 1000, email_verified: true,
  suspended: false, security: DEFAULT_SECURITY_BODY, captcha: null,
};

/** A complete organization PUT body: ORG_SETTINGS with `body` over it (`security` merged one level). */
export function orgBody(body: Record<string, unknown> = {}): Record<string, unknown> {
  const security = body.security as Record<string, unknown> | undefined;
  return { ...ORG_SETTINGS, ...body, security: { ...DEFAULT_SECURITY_BODY, ...security } };
}

/** Creates an organization through the API (a complete PUT body from `orgBody`). */
export async function createOrg(t: TestApp, id = 'acme', body: Record<string, unknown> = {}): Promise<void> {
  const res = await admin(t, 'PUT', `/organizations/${id}`, orgBody({ name: id, ...body }));
  expect(res.statusCode, res.body).toBe(201);
}

/** A message row as the send path would leave it, inserted directly. */
export async function insertMessage(
  store: Store, orgId: string, id: string, status: MessageStatus, createdAt: number, creditTaken: boolean, serviceId = 'outbox',
): Promise<void> {
  await insertMessageRow(store, {
    id,
    org_id: orgId,
    template_id: 'contact',
    service_id: serviceId,
    status,
    status_token_hash: newId('tok'),
    key_type: 'private',
    subject: 'Hi',
    header_message_id: `<${id}@mailroom.test>`,
    credit_taken: creditTaken ? 1 : 0,
    attempts: 0,
    next_attempt_at: status === 'queued' ? createdAt : null,
    lease_until: null,
    last_error: null,
    idempotency_key: null,
    created_at: createdAt,
    updated_at: createdAt,
    sent_at: status === 'sent' ? createdAt + 1000 : null,
  }, {
    message_id: id,
    content: JSON.stringify({ subject: 'Hi', to: ['someone@example.com'], html: '<p>Hi</p>', text: 'Hi' }),
    attachments: null,
  });
}

/** A private-key send of the seeded `contact` template: 202 while the organization, service and template are whole. */
export function sendContact(t: TestApp, privateKey: string): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST', url: '/v1/send', headers: { authorization: `Bearer ${privateKey}` },
    payload: { template_id: 'contact', template_params: { name: 'Ann', email: 'ann@example.org', message: 'hi' } },
  });
}
