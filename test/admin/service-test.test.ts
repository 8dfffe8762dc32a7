import { afterEach, describe, expect, it } from 'vitest';
import { freshAppEach, type TestApp } from '../support/app.js';
import { Closer } from '../support/cleanup.js';
import { freePort, startSink } from '../support/smtp-sink.js';
import { startPostmark } from '../support/providers/fakes/postmark.js';
import { admin, createOrg } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { sendFailureReason } from '../../src/admin/service-test.js';
import { DeliveryError, ServiceTestError } from '../../src/delivery/transport.js';
import { describeDialects } from '../support/dialects.js';

describe("a failed test send's reason, from the transport's error", () => {
  it("reads the providers' wordings", () => {
    const service = (m: string) => sendFailureReason(new DeliveryError('service', m));
    expect(service('postmark 422 ErrorCode 401: Sender signature not confirmed')).toBe('unverified_sender');
    expect(service('sendgrid 403: The from address does not match a verified Sender Identity.')).toBe('unverified_sender');
    expect(service('ses MessageRejected: Email address is not verified. The following identities failed the check')).toBe(
      'unverified_sender',
    );
    expect(service('535 5.7.8 Authentication credentials invalid')).toBe('auth');
    expect(service('resend 403 invalid_api_key: API key is invalid')).toBe('auth');
    expect(service('TLS with relay:465 (secure: true) failed: wrong version number')).toBe('tls');
    expect(sendFailureReason(new DeliveryError('temporary', 'postmark: no answer from api within 30000 ms (timeout)'))).toBe(
      'timeout',
    );
    expect(sendFailureReason(new DeliveryError('temporary', 'connect ECONNREFUSED 127.0.0.1:25'))).toBe('connect');
    expect(sendFailureReason(new DeliveryError('permanent', 'postmark 422 ErrorCode 300: Invalid email request'))).toBe('other');
    expect(sendFailureReason(new ServiceTestError('tls', 'x'))).toBe('tls');
  });
});

const smtpBody = (port: number, extra: Record<string, unknown> = {}) => ({
  provider: 'smtp',
  default: true,
  from_email: 'noreply@example.com',
  from_name: 'Acme',
  smtp: { host: '127.0.0.1', port, user: 'mailer', pass: 's3cret', ...extra },
});

interface TestResult {
  ok: true;
  latency_ms: number;
  sent?: { to: string; response: string; provider_message_id?: string; latency_ms: number };
}

describeDialects('POST /admin/v1/organizations/{org}/services/{id}/test on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });
  const closer = new Closer();
  afterEach(async () => {
    await closer.closeAll();
  });

  const putService = async (id: string, body: Record<string, unknown>) => {
    const res = await admin(t, 'PUT', `/organizations/acme/services/${id}`, body);
    expect(res.statusCode, res.body).toBeLessThan(300);
  };
  const test = (id: string, body?: Record<string, unknown>) => admin(t, 'POST', `/organizations/acme/services/${id}/test`, body);

  it.skipIf(skip)('SMTP: 200 { ok, latency_ms } after connect and AUTH, without sending', async () => {
    const sink = await startSink({ auth: { user: 'mailer', pass: 's3cret' } }, closer);
    await createOrg(t);
    await putService('relay', smtpBody(sink.port));
    const res = await test('relay');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<TestResult>();
    expect(body.ok).toBe(true);
    expect(Number.isInteger(body.latency_ms) && body.latency_ms >= 0).toBe(true);
    expect(Object.keys(body).sort()).toEqual(['latency_ms', 'ok']);
    expect(sink.authAttempts).toEqual([{ user: 'mailer', ok: true }]);
    expect(sink.received).toHaveLength(0);
    // An empty JSON body is the same request.
    expect((await test('relay', {})).statusCode).toBe(200);
  });

  it.skipIf(skip)("SMTP failures are 502 provider_error in the spec's envelope, with details.reason", async () => {
    const sink = await startSink({ auth: { user: 'mailer', pass: 's3cret' } }, closer);
    const plain = await startSink({}, closer);
    await createOrg(t);
    await putService('wrong-pass', smtpBody(sink.port, { pass: 'nope' }));
    await putService('tls', { ...smtpBody(plain.port, { secure: true, user: '', pass: '' }), default: false });
    await putService('down', { ...smtpBody(await freePort()), default: false });

    const auth = expectError(await test('wrong-pass'), 502, 'provider_error');
    expect(auth.details).toMatchObject({ reason: 'auth', stage: 'verify', provider: 'smtp', service_id: 'wrong-pass' });
    expect(auth.message).toContain('535');
    expect(auth.docs_url).toMatch(/#provider-error$/);
    expect(expectError(await test('tls'), 502, 'provider_error').details).toMatchObject({ reason: 'tls' });
    const down = expectError(await test('down'), 502, 'provider_error');
    expect(down.details).toMatchObject({ reason: 'connect' });
    expect(down.message).toContain('ECONNREFUSED');
  });

  it.skipIf(skip)('with `to`, one real message goes through the service and its answer is reported', async () => {
    const sink = await startSink({ auth: { user: 'mailer', pass: 's3cret' } }, closer);
    await createOrg(t);
    await putService('relay', smtpBody(sink.port));
    const res = await test('relay', { to: 'ops@example.org' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<TestResult>();
    expect(body.sent?.to).toBe('ops@example.org');
    expect(body.sent?.response).toMatch(/^250/);
    expect(sink.received).toHaveLength(1);
    expect(sink.received[0]?.rcptTo).toEqual(['ops@example.org']);
    const parsed = await sink.parse(0);
    expect(parsed.subject).toBe('mailroom service test');
    expect(parsed.from?.value[0]).toMatchObject({ address: 'noreply@example.com', name: 'Acme' });
    expect(parsed.text).toContain('service test');
    expect(parsed.html).toBe(false);
    // The relay refusing the recipient: 502 with its reply, at the send stage.
    sink.behaviour.rcpt = () => Object.assign(new Error('5.1.1 No such user here'), { responseCode: 550 });
    const refused = expectError(await test('relay', { to: 'nobody@example.org' }), 502, 'provider_error');
    expect(refused.details).toMatchObject({ stage: 'send', reason: 'other' });
    expect(refused.message).toContain('No such user');
  });

  it.skipIf(skip)('bad input: an unknown service or organization is 404, a bad `to` 400, no from_email 422', async () => {
    await createOrg(t);
    await putService('box', { provider: 'outbox', default: true });
    expectError(await test('nope'), 404, 'not_found');
    expectError(await admin(t, 'POST', '/organizations/nobody/services/box/test'), 404, 'not_found');
    expect(expectError(await test('box', { to: 'not-an-address' }), 400, 'invalid_body').details?.fields).toEqual([
      { field: 'to', message: 'is not an e-mail address' },
    ]);
    expectError(await test('box', { to: 'ops@example.org', extra: 1 }), 400, 'invalid_body');
    expectError(await test('box', { to: 'ops@example.org' }), 422, 'sender_not_configured');
    // The outbox has no credentials to check.
    expect((await test('box')).statusCode).toBe(200);
    expectError(await admin(t, 'POST', '/organizations/acme/services/box/test', undefined, 'wrong-token'), 401, 'unauthorized');
  });

  it.skipIf(skip)(
    'an HTTP provider (Postmark, against a loopback fake of its API): its read-only call, and a refused token as auth',
    async () => {
      const fake = await startPostmark('pm-good-token');
      closer.defer(() => fake.close());
      await createOrg(t);
      await putService('pm', {
        provider: 'postmark',
        default: true,
        from_email: 'noreply@example.com',
        postmark: { server_token: 'pm-good-token', endpoint: fake.url },
      });
      await putService('pm-bad', {
        provider: 'postmark',
        default: false,
        postmark: { server_token: 'pm-wrong-token', endpoint: fake.url },
      });
      const ok = await test('pm');
      expect(ok.statusCode, ok.body).toBe(200);
      expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /server']);
      expect(fake.sent).toHaveLength(0);
      const bad = expectError(await test('pm-bad'), 502, 'provider_error');
      expect(bad.details).toMatchObject({ reason: 'auth', stage: 'verify', provider: 'postmark' });
      expect(bad.message).toContain('X-Postmark-Server-Token');
      // With `to`: the provider's own id comes back.
      const sent = await test('pm', { to: 'ops@example.org' });
      expect(sent.statusCode, sent.body).toBe(200);
      expect(fake.sent).toHaveLength(1);
      expect(sent.json<TestResult>().sent?.provider_message_id).toBe(fake.sent[0]?.messageId);
      expect(fake.sent[0]?.json).toMatchObject({ Subject: 'mailroom service test', To: 'ops@example.org' });
      // The sender refused by the provider (Postmark's documented 422 ErrorCode 400) at the send: unverified_sender.
      fake.script({
        path: '/email',
        status: 422,
        body: {
          ErrorCode: 400,
          Message: "The 'From' address you supplied (noreply@example.com) is not a Sender Signature on your account.",
        },
      });
      const unverified = expectError(await test('pm', { to: 'ops@example.org' }), 502, 'provider_error');
      expect(unverified.details).toMatchObject({
        reason: 'unverified_sender',
        stage: 'send',
        kind: 'service',
        provider: 'postmark',
      });
      expect(unverified.message).toContain('Sender Signature');
    },
  );
});
