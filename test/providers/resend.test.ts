import { describe, expect, it } from 'vitest';
import { classifyResend, resendTransport } from '../../src/delivery/transports/resend.js';
import { deliveryHarness, row } from '../support/delivery.js';
import { startResend } from '../support/providers/fakes/resend.js';
import { BCC, CC, NOTES, PDF, providerSetup, TO } from '../support/providers/send-path.js';
import { serviceRow, verifyOutcome } from '../support/providers/transport.js';
import { describeDialects } from '../support/dialects.js';

describeDialects('resend transport on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)(
    'a full send through the worker: fields, attachments byte for byte, Message-ID, tags, Idempotency-Key; id stored',
    async () => {
      const fake = await startResend();
      h.closer.defer(() => fake.close());
      const { t, worker, send } = await providerSetup(
        dialect,
        h.closer,
        'resend',
        { api_key: fake.key, endpoint: fake.url },
        resendTransport,
      );
      const id = await send();
      expect(await worker.runOnce()).toBe(1);
      const m = fake.sent[0]!;
      expect(m.json.from).toBe('"Acme Support" <noreply@acme.test>');
      expect(m.json.to).toEqual([`"Acme Owner" <${TO}>`]);
      expect(m.json.cc).toEqual([CC]);
      expect(m.json.bcc).toEqual([BCC]);
      expect(m.json.reply_to).toEqual(['"Ada Lovelace" <ada@example.org>']);
      expect(m.json.tags).toEqual([{ name: 'mailroom_message_id', value: id }]);
      expect(m.idempotencyKey).toMatch(new RegExp(`^${id}:[0-9a-f]{64}$`));
      const stored = await row(t.store, id);
      expect(m.json.headers).toEqual({ 'Message-ID': stored.header_message_id });
      expect(m.attachments[0]!.content.equals(PDF)).toBe(true);
      expect(m.attachments[0]!.contentType).toBe('application/pdf');
      expect(m.attachments[1]!.content.equals(NOTES)).toBe(true);
      expect(stored.status).toBe('sent');
      expect(stored.provider_message_id).toBe(m.id);
    },
  );
});

describe('resend error table', () => {
  const res = (status: number, name: string, message: string, headers: Record<string, string> = {}) => ({
    status,
    headers,
    body: JSON.stringify({ statusCode: status, name, message }),
  });
  const all = ['a@x.test', 'bad@@x.test'];
  it.each([
    [
      '429 rate_limit_exceeded',
      res(429, 'rate_limit_exceeded', 'Too many requests.', { 'retry-after': '2' }),
      'temporary',
      { throttled: true, retryAfterMs: 2_000 },
    ],
    [
      '429 daily_quota_exceeded',
      res(429, 'daily_quota_exceeded', 'You have reached your daily email sending quota.', { 'retry-after': '7200' }),
      'temporary',
      { retryAfterMs: 7_200_000 },
    ],
    ['429 monthly_quota_exceeded', res(429, 'monthly_quota_exceeded', 'Upgrade your plan.'), 'service', {}],
    ['500 application_error', res(500, 'application_error', 'An unexpected error occurred.'), 'temporary', {}],
    ['500 internal_server_error', res(500, 'internal_server_error', 'An unexpected error occurred.'), 'temporary', {}],
    [
      '409 concurrent_idempotent_requests',
      res(409, 'concurrent_idempotent_requests', 'Try the request again later.'),
      'temporary',
      {},
    ],
    ['401 missing_api_key', res(401, 'missing_api_key', 'Missing API key in the authorization header.'), 'service', {}],
    ['401 restricted_api_key', res(401, 'restricted_api_key', 'This API key is restricted to only send emails.'), 'service', {}],
    ['400 API key is invalid', res(400, 'validation_error', 'API key is invalid'), 'service', {}],
    ['403 invalid_api_key', res(403, 'invalid_api_key', 'API key is invalid.'), 'service', {}],
    [
      '403 domain not verified',
      res(403, 'validation_error', 'The acme.test domain is not verified. Please, add and verify your domain.'),
      'service',
      {},
    ],
    [
      '403 testing emails',
      res(403, 'validation_error', 'You can only send testing emails to your own email address.'),
      'service',
      {},
    ],
    ['422 invalid_from_address', res(422, 'invalid_from_address', 'Invalid `from` field.'), 'service', {}],
    ['451 security_error', res(451, 'security_error', 'Contact support.'), 'service', {}],
    [
      '422 validation_error on to (unnamed)',
      res(422, 'validation_error', 'Invalid `to` field. The email address needs to follow the `email@example.com` format.'),
      'permanent',
      {},
    ],
    [
      '409 invalid_idempotent_request',
      res(409, 'invalid_idempotent_request', 'Same idempotency key used with a different request payload.'),
      'permanent',
      {},
    ],
    [
      '422 missing_required_field',
      res(422, 'missing_required_field', 'The request body is missing one or more required fields.'),
      'permanent',
      {},
    ],
    ['422 invalid_attachment', res(422, 'invalid_attachment', 'Attachment must have either a content or path.'), 'permanent', {}],
    ['404 not_found', res(404, 'not_found', 'The requested endpoint does not exist.'), 'permanent', {}],
    ['405 method_not_allowed', res(405, 'method_not_allowed', 'Method not allowed'), 'permanent', {}],
  ] as const)('%s → %s', (_n, answer, kind, options) => {
    const e = classifyResend(answer, all, Date.now());
    expect(e.kind).toBe(kind);
    expect(e.options).toMatchObject(options);
  });

  it('a validation error on `to` naming one recipient: it fails (not suppressed), the other is deferred', () => {
    const e = classifyResend(
      res(422, 'validation_error', 'Invalid `to` field: bad@@x.test is not a valid email address.'),
      all,
      Date.now(),
    );
    expect(e.kind).toBe('temporary');
    expect(e.refused).toEqual([
      expect.objectContaining({ address: 'a@x.test', kind: 'temporary' }),
      expect.objectContaining({ address: 'bad@@x.test', kind: 'permanent' }),
    ]);
  });
});

describe('resend verify()', () => {
  const verify = (settings: Record<string, unknown>) =>
    verifyOutcome(resendTransport(serviceRow('resend', { resend: settings }, 'svc'), { dataDir: '/tmp' }));
  it('ok; ok for a sending-only key; auth; unverified_sender; connect', async () => {
    const fake = await startResend();
    try {
      expect(await verify({ api_key: fake.key, endpoint: fake.url })).toBe('ok');
      fake.script({
        path: '/domains',
        status: 401,
        body: { statusCode: 401, name: 'restricted_api_key', message: 'This API key is restricted to only send emails.' },
      });
      expect(await verify({ api_key: fake.key, endpoint: fake.url })).toBe('ok');
      expect(await verify({ api_key: 're_wrong', endpoint: fake.url })).toBe('auth');
      fake.script({
        path: '/domains',
        status: 403,
        body: {
          statusCode: 403,
          name: 'validation_error',
          message: 'The acme.test domain is not verified. Please, add and verify your domain.',
        },
      });
      expect(await verify({ api_key: fake.key, endpoint: fake.url })).toBe('unverified_sender');
    } finally {
      await fake.close();
    }
    expect(await verify({ api_key: 'k', endpoint: `http://127.0.0.1:${fake.port}` })).toBe('connect');
  });
});
