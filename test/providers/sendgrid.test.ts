import { describe, expect, it } from 'vitest';
import { classifySendgrid, sendgridTransport } from '../../src/delivery/transports/sendgrid.js';
import { deliveryHarness, row } from '../support/delivery.js';
import { startSendgrid } from '../support/providers/fakes/sendgrid.js';
import { BCC, CC, NOTES, PDF, providerSetup, TO } from '../support/providers/send-path.js';
import { serviceRow, verifyOutcome } from '../support/providers/transport.js';
import { describeDialects } from '../support/dialects.js';

describeDialects('sendgrid transport on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)(
    'a full send through the worker: personalizations, reply_to, content, ' +
      'attachments byte for byte, Message-ID, custom_args; X-Message-Id stored',
    async () => {
      const fake = await startSendgrid();
      h.closer.defer(() => fake.close());
      const { t, worker, send } = await providerSetup(
        dialect,
        h.closer,
        'sendgrid',
        { api_key: fake.key, endpoint: fake.url },
        sendgridTransport,
      );
      const id = await send();
      expect(await worker.runOnce()).toBe(1);
      const m = fake.sent[0]!;
      expect(m.json.personalizations).toEqual([
        {
          to: [{ email: TO, name: 'Acme Owner' }],
          cc: [{ email: CC }],
          bcc: [{ email: BCC }],
          custom_args: { mailroom_message_id: id },
        },
      ]);
      expect(m.json.from).toEqual({ email: 'noreply@acme.test', name: 'Acme Support' });
      expect(m.json.reply_to).toEqual({ email: 'ada@example.org', name: 'Ada Lovelace' });
      expect(m.json.content).toEqual([
        { type: 'text/plain', value: 'Hello from the engine' },
        { type: 'text/html', value: '<p>Hello from the engine</p>' },
      ]);
      const stored = await row(t.store, id);
      expect(m.json.headers).toEqual({ 'Message-ID': stored.header_message_id });
      expect(m.attachments[0]!.content.equals(PDF)).toBe(true);
      expect(m.attachments[1]!.content.equals(NOTES)).toBe(true);
      expect(stored.status).toBe('sent');
      expect(stored.provider_message_id).toBe(m.messageId);
    },
  );
});

describe('sendgrid error table', () => {
  const res = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
    status,
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const errors = (message: string, field: string | null = null) => ({ errors: [{ message, field, help: null }] });
  const now = 1_700_000_000_000;
  it.each([
    [
      '429 with X-RateLimit-Reset',
      res(429, errors('too many requests'), { 'x-ratelimit-reset': String(now / 1000 + 90) }),
      'temporary',
      { throttled: true, retryAfterMs: 90_000 },
    ],
    ['500', res(500, errors('An error occurred on a SendGrid server')), 'temporary', {}],
    ['503', res(503, 'The SendGrid v3 Web API is not available'), 'temporary', {}],
    ['401', res(401, errors('The provided authorization grant is invalid, expired, or revoked')), 'service', {}],
    [
      '403 sender identity',
      res(
        403,
        errors(
          'The from address does not match a verified Sender Identity. Mail cannot be sent until this error is resolved.',
          'from',
        ),
      ),
      'service',
      {},
    ],
    ['403 access forbidden', res(403, errors('access forbidden')), 'service', {}],
    [
      '403 temporary block',
      res(403, errors('You are temporarily blocked from sending emails due to repeated bad requests')),
      'temporary',
      {},
    ],
    ['400 field error', res(400, errors('The subject is required.', 'subject')), 'permanent', {}],
    ['413 nginx page', res(413, '<html><head><title>413 Request Entity Too Large</title></head></html>'), 'permanent', {}],
    ['404', res(404, errors('not found')), 'permanent', {}],
  ] as const)('%s → %s', (_n, answer, kind, options) => {
    const e = classifySendgrid(answer, now);
    expect(e.kind).toBe(kind);
    expect(e.options).toMatchObject(options);
    expect(e.message).toMatch(/^sendgrid HTTP \d{3}/);
  });
});

describe('sendgrid verify()', () => {
  const verify = (settings: Record<string, unknown>) =>
    verifyOutcome(sendgridTransport(serviceRow('sendgrid', { sendgrid: settings }, 'svc'), { dataDir: '/tmp' }));
  it('ok; auth for a wrong key and for a key without mail.send; connect when nothing listens', async () => {
    const fake = await startSendgrid();
    try {
      expect(await verify({ api_key: fake.key, endpoint: fake.url })).toBe('ok');
      expect(await verify({ api_key: 'SG.wrong', endpoint: fake.url })).toBe('auth');
      fake.scopes.splice(0, fake.scopes.length, 'stats.read');
      expect(await verify({ api_key: fake.key, endpoint: fake.url })).toBe('auth');
    } finally {
      await fake.close();
    }
    expect(await verify({ api_key: 'k', endpoint: `http://127.0.0.1:${fake.port}` })).toBe('connect');
  });
});
