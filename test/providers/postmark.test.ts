import { describe, expect, it } from 'vitest';
import { ServiceTestError } from '../../src/delivery/transport.js';
import { postmarkTransport } from '../../src/delivery/transports/postmark.js';
import type { Service } from '../../src/domain/types.js';
import { Closer } from '../support/cleanup.js';
import { deliveryHarness, row, view } from '../support/delivery.js';
import { startPostmark, type PostmarkFake } from '../support/providers/fakes/postmark.js';
import type { FakeAnswer } from '../support/providers/fakes/server.js';
import { BCC, CC, NOTES, PDF, providerSetup, suppressed, TO } from '../support/providers/send-path.js';
import { describeDialects } from '../support/dialects.js';

const err = (status: number, code: number, message: string): FakeAnswer => ({
  status,
  body: { ErrorCode: code, Message: message },
});

/** Every row of postmark.ts's table: the answer, the message's status after one attempt. */
const ROWS: Array<[string, FakeAnswer, string]> = [
  [
    'HTTP 429',
    { status: 429, body: { ErrorCode: 429, Message: 'Rate limit exceeded' }, headers: { 'retry-after': '120' } },
    'queued',
  ],
  ['422 ErrorCode 429', err(422, 429, 'Rate limit exceeded'), 'queued'],
  ['HTTP 500', err(500, 0, 'Internal Server Error'), 'queued'],
  ['HTTP 503', { status: 503, body: 'Service Unavailable' }, 'queued'],
  ['ErrorCode 100', err(422, 100, 'Maintenance'), 'queued'],
  ['HTTP 401 / ErrorCode 10', err(401, 10, 'Bad or missing API token'), 'held_service_error'],
  ['ErrorCode 400', err(422, 400, 'Sender Signature not found'), 'held_service_error'],
  ['ErrorCode 401', err(422, 401, 'Sender signature not confirmed'), 'held_service_error'],
  ['ErrorCode 405', err(422, 405, 'Not allowed to send'), 'held_service_error'],
  ['ErrorCode 412', err(422, 412, 'Account is pending'), 'held_service_error'],
  ['ErrorCode 413', err(422, 413, 'Account may not send'), 'held_service_error'],
  ['ErrorCode 300', err(422, 300, 'Invalid email request'), 'failed'],
  ['ErrorCode 402', err(422, 402, 'Invalid JSON'), 'failed'],
  ['ErrorCode 403', err(422, 403, 'Incompatible JSON'), 'failed'],
  ['ErrorCode 409', err(422, 409, 'JSON required'), 'failed'],
  ['ErrorCode 411', err(422, 411, 'Forbidden attachment type'), 'failed'],
  ['HTTP 413', { status: 413, body: '<html><body>Payload Too Large</body></html>' }, 'failed'],
  ['HTML 403 without ErrorCode', { status: 403, body: '<html><body>Forbidden: contact us</body></html>' }, 'held_service_error'],
  ['another 4xx', { status: 404, body: '' }, 'failed'],
];

describeDialects('postmark transport on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);
  const setup = async () => {
    const fake = await startPostmark();
    h.closer.defer(() => fake.close());
    const s = await providerSetup(
      dialect,
      h.closer,
      'postmark',
      { server_token: fake.token, message_stream: 'outbound', endpoint: fake.url },
      postmarkTransport,
    );
    return { fake, ...s };
  };

  it.skipIf(skip)(
    'a full send: from, to, cc, bcc, reply-to, subject, bodies, attachments ' +
      'byte for byte, our Message-ID and metadata; the MessageID on the message',
    async () => {
      const { fake, t, worker, send } = await setup();
      const id = await send();
      expect(await worker.runOnce()).toBe(1);
      expect(fake.sent).toHaveLength(1);
      const m = fake.sent[0]!;
      expect(m.json.From).toBe('"Acme Support" <noreply@acme.test>');
      expect(m.json.To).toBe(`"Acme Owner" <${TO}>`);
      expect(m.json.Cc).toBe(CC);
      expect(m.json.Bcc).toBe(BCC);
      expect(m.json.ReplyTo).toBe('"Ada Lovelace" <ada@example.org>');
      expect(m.json.Subject).toBe('Message from Ada Lovelace');
      expect(m.json.TextBody).toBe('Hello from the engine');
      expect(m.json.HtmlBody).toBe('<p>Hello from the engine</p>');
      expect(m.json.MessageStream).toBe('outbound');
      expect(m.json.Metadata).toEqual({ mailroom_message_id: id });
      const stored = await row(t.store, id);
      expect(m.json.Headers).toEqual([{ Name: 'Message-ID', Value: stored.header_message_id }]);
      expect(m.attachments.map((a) => a.name)).toEqual(['report.pdf', 'notes.txt']);
      expect(m.attachments[0]!.content.equals(PDF)).toBe(true);
      expect(m.attachments[0]!.contentType).toBe('application/pdf');
      expect(m.attachments[1]!.content.equals(NOTES)).toBe(true);
      expect(stored.status).toBe('sent');
      expect(stored.provider_message_id).toBe(m.messageId);
      const sentEvent = (await view(t, id)).events.find((e) => e.type === 'sent');
      expect(JSON.stringify(sentEvent)).toContain(m.messageId);
    },
  );

  it.skipIf(skip).each(ROWS)('%s → %s', async (_name, answer, status) => {
    const { fake, t, worker, send } = await setup();
    fake.script({ ...answer, path: '/email' });
    const id = await send();
    expect(await worker.runOnce()).toBe(1);
    expect((await row(t.store, id)).status).toBe(status);
    expect(await suppressed(t)).toEqual([]);
  });

  it.skipIf(skip)(
    'ErrorCode 406: the listed inactive addresses bounce and are suppressed; the others are sent on the retry, nobody twice',
    async () => {
      const { fake, t, worker, send } = await setup();
      fake.script({
        ...err(
          422,
          406,
          `You tried to send to recipient(s) that have been marked as inactive. Found inactive ` +
            `addresses: ${CC}. Inactive recipients are ones that have generated a hard bounce or a spam complaint.`,
        ),
        path: '/email',
      });
      const id = await send();
      expect(await worker.runOnce()).toBe(1);
      expect(await suppressed(t)).toEqual([CC]);
      const v = await view(t, id);
      expect(v.status).toBe('queued');
      t.clock.advance(2 * 60 * 60_000);
      expect(await worker.runOnce()).toBe(1);
      expect(fake.sent).toHaveLength(1);
      expect(fake.sent[0]!.json.To).toBe(`"Acme Owner" <${TO}>`);
      expect(fake.sent[0]!.json.Cc).toBeUndefined();
      expect(fake.sent[0]!.json.Bcc).toBe(BCC);
      const after = await view(t, id);
      expect(Object.fromEntries((after.recipients ?? []).map((r) => [r.address, r.state]))).toMatchObject({ [CC]: 'bounced' });
    },
  );

  it.skipIf(skip)(
    '200 ErrorCode 0 naming an inactive address: sent to the others with ' +
      'the MessageID, the inactive one bounced and suppressed, nothing sent again',
    async () => {
      const { fake, t, worker, send } = await setup();
      fake.inactive.add(CC);
      const id = await send();
      expect(await worker.runOnce()).toBe(1);
      expect(fake.sent).toHaveLength(1);
      const v = await view(t, id);
      expect(v.status).toBe('sent');
      expect(Object.fromEntries((v.recipients ?? []).map((r) => [r.address, r.state]))).toMatchObject({
        [TO]: 'sent',
        [CC]: 'bounced',
        [BCC]: 'sent',
      });
      expect(await suppressed(t)).toEqual([CC]);
      expect((await row(t.store, id)).provider_message_id).toBe(fake.sent[0]!.messageId);
      t.clock.advance(2 * 60 * 60_000);
      expect(await worker.runOnce()).toBe(0);
      expect(fake.sent).toHaveLength(1);
    },
  );

  it.skipIf(skip)('ErrorCode 406 naming every recipient: bounced, all suppressed', async () => {
    const { fake, t, worker, send } = await setup();
    fake.script({
      ...err(
        422,
        406,
        `Found inactive addresses: ${TO}, ${CC}, ${BCC}. Inactive ` +
          `recipients are ones that have generated a hard bounce or a spam complaint.`,
      ),
      path: '/email',
    });
    const id = await send();
    expect(await worker.runOnce()).toBe(1);
    expect((await row(t.store, id)).status).toBe('bounced');
    expect(await suppressed(t)).toEqual([BCC, CC, TO].sort());
  });
});

describe('postmark verify()', () => {
  const service = (settings: Record<string, unknown>): Service => ({
    org_id: 'acme',
    id: 'svc',
    provider: 'postmark',
    settings: { postmark: settings },
    is_default: true,
    max_per_second: null,
    version: 1,
    created_at: 0,
    updated_at: 0,
  });
  const verify = async (fake: PostmarkFake | undefined, settings: Record<string, unknown>) => {
    const transport = postmarkTransport(service(settings), { dataDir: '/tmp' });
    try {
      await transport.verify!();
      return 'ok';
    } catch (e) {
      return e instanceof ServiceTestError ? e.reason : `not a ServiceTestError: ${String(e)}`;
    } finally {
      await transport.close();
      void fake;
    }
  };

  it('ok with the right token; auth with a wrong one; other on a 500; connect when none listens; bad settings', async () => {
    const closer = new Closer();
    try {
      const fake = await startPostmark();
      closer.defer(() => fake.close());
      expect(await verify(fake, { server_token: fake.token, endpoint: fake.url })).toBe('ok');
      expect(fake.requests.at(-1)?.path).toBe('/server');
      expect(await verify(fake, { server_token: 'wrong', endpoint: fake.url })).toBe('auth');
      fake.script({ status: 500, body: 'oops', path: '/server' });
      expect(await verify(fake, { server_token: fake.token, endpoint: fake.url })).toBe('other');
      const port = fake.port;
      await fake.close();
      expect(await verify(undefined, { server_token: 'x', endpoint: `http://127.0.0.1:${port}` })).toBe('connect');
      expect(() => postmarkTransport(service({}), { dataDir: '/tmp' })).toThrow(/server_token/);
      expect(() => postmarkTransport(service({ server_token: 't', endpoint: 'ftp://x' }), { dataDir: '/tmp' })).toThrow(
        /endpoint/,
      );
    } finally {
      await closer.closeAll();
    }
  });
});
