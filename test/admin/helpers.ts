import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import type { MessageStatus } from '../../src/domain/types.js';
import type { Store } from '../../src/storage/store.js';
import { ADMIN_TOKEN, type TestApp } from '../support/app.js';

export { expectError, type ErrorBody } from '../support/http.js';

type Method = 'GET' | 'PUT' | 'POST' | 'DELETE';

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

/** Creates an organization through the API. */
export async function createOrg(t: TestApp, id = 'acme', body: Record<string, unknown> = {}): Promise<void> {
  const res = await admin(t, 'PUT', `/organizations/${id}`, body);
  expect(res.statusCode, res.body).toBe(201);
}

/** A message row as the send path would leave it, inserted directly. */
export async function insertMessage(
  store: Store, orgId: string, id: string, status: MessageStatus, createdAt: number, creditTaken: boolean, serviceId = 'outbox',
): Promise<void> {
  await store.db.insertInto('messages').values({
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
  }).execute();
  await store.db.insertInto('message_contents').values({
    message_id: id,
    content: JSON.stringify({ subject: 'Hi', to: ['someone@example.com'], html: '<p>Hi</p>', text: 'Hi' }),
    attachments: null,
  }).execute();
}
