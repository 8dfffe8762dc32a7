import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY, nextAttemptAt, type RetryPolicy } from '../../src/delivery/retry.js';
import { classifySmtpError } from '../../src/delivery/classify.js';

describe('nextAttemptAt', () => {
  const created = Date.UTC(2026, 0, 1);
  const mid = () => 0.5; // no jitter
  const at = (attempts: number, now = created, random = mid, policy: RetryPolicy = DEFAULT_RETRY) =>
    nextAttemptAt(policy, attempts, created, now, random);

  it('grows exponentially from 30 s: 30 s, 1 min, 2 min, 4 min, …', () => {
    expect([1, 2, 3, 4, 5, 6].map((a) => (at(a) ?? 0) - created)).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 960_000]);
  });

  it('is counted from now, not from creation', () => {
    expect(at(1, created + 90_000)).toBe(created + 90_000 + 30_000);
  });

  it('is capped at maxDelayMs (1 h)', () => {
    expect((at(8) ?? 0) - created).toBe(DEFAULT_RETRY.maxDelayMs); // 30 s · 2^7 = 64 min → 60 min
    expect((at(9) ?? 0) - created).toBe(DEFAULT_RETRY.maxDelayMs);
    const big = { ...DEFAULT_RETRY, maxAttempts: 1000, maxAgeMs: Number.MAX_SAFE_INTEGER };
    expect((nextAttemptAt(big, 200, created, created, mid) ?? 0) - created).toBe(DEFAULT_RETRY.maxDelayMs);
  });

  it('jitter stays within ±20 % and reaches both ends', () => {
    expect((at(1, created, () => 0) ?? 0) - created).toBe(24_000);
    expect((at(1, created, () => 0.999_999) ?? 0) - created).toBe(36_000);
    expect((at(3, created, () => 0) ?? 0) - created).toBe(96_000);
    const delays = Array.from({ length: 2000 }, () => (at(2, created, Math.random) ?? 0) - created);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(48_000);
    expect(Math.max(...delays)).toBeLessThanOrEqual(72_000);
    // Spread out, not in lockstep.
    expect(new Set(delays).size).toBeGreaterThan(500);
    expect(Math.min(...delays)).toBeLessThan(52_000);
    expect(Math.max(...delays)).toBeGreaterThan(68_000);
  });

  it('gives up after maxAttempts attempts (10)', () => {
    expect(DEFAULT_RETRY.maxAttempts).toBe(10);
    expect(at(9)).toBeDefined();
    expect(at(10)).toBeUndefined();
    expect(at(11)).toBeUndefined();
    expect(nextAttemptAt({ ...DEFAULT_RETRY, maxAttempts: 2 }, 2, created, created, mid)).toBeUndefined();
  });

  it('gives up when the next attempt would pass the maximum age (24 h in the queue)', () => {
    const day = DEFAULT_RETRY.maxAgeMs;
    expect(day).toBe(24 * 3_600_000);
    // 30 s retry from 23 h 59 m 20 s: lands at 23 h 59 m 50 s, still within the day.
    expect(at(1, created + day - 40_000)).toBe(created + day - 10_000);
    // From 23 h 59 m 40 s it would land at 24 h 0 m 10 s: give up.
    expect(at(1, created + day - 20_000)).toBeUndefined();
    expect(at(1, created + day)).toBeUndefined();
  });
});

describe('classifySmtpError', () => {
  it("authentication, TLS and configuration errors are the service's (held_service_error)", () => {
    expect(
      classifySmtpError({
        code: 'EAUTH',
        responseCode: 535,
        command: 'AUTH PLAIN',
        response: '535 5.7.8 Authentication credentials invalid',
        message: 'Invalid login',
      }),
    ).toBe('service');
    expect(classifySmtpError({ code: 'ENOAUTH', message: 'Missing credentials for "PLAIN"' })).toBe('service');
    expect(classifySmtpError({ code: 'ETLS', message: 'Error initiating TLS' })).toBe('service');
    expect(classifySmtpError({ code: 'ECONFIG', message: 'Missing host' })).toBe('service');
    // 530 authentication required, 534 mechanism too weak, 535 bad credentials, whatever the code.
    for (const status of [530, 534, 535]) {
      expect(
        classifySmtpError({
          code: 'EENVELOPE',
          command: 'MAIL FROM',
          responseCode: status,
          response: `${status} 5.7.0 Authentication required`,
          message: 'x',
        }),
      ).toBe('service');
    }
  });

  it("certificate and TLS handshake failures are the service's, whatever code nodemailer gives them", () => {
    // As nodemailer 10 reports them: code ESOCKET, Node's code kept as originalCode.
    expect(
      classifySmtpError({
        code: 'ESOCKET',
        originalCode: 'CERT_HAS_EXPIRED',
        command: 'CONN',
        message: 'certificate has expired',
      }),
    ).toBe('service');
    expect(
      classifySmtpError({
        code: 'ESOCKET',
        originalCode: 'ERR_SSL_WRONG_VERSION_NUMBER',
        command: 'CONN',
        message:
          '80AC6674F17F0000:error:0A00010B:SSL routines:ssl3_get_record:wrong ' +
          'version number:../deps/openssl/openssl/ssl/record/ssl3_record.c:350:\n',
      }),
    ).toBe('service');
    expect(
      classifySmtpError({
        code: 'ESOCKET',
        originalCode: 'ERR_TLS_CERT_ALTNAME_INVALID',
        command: 'CONN',
        message:
          "Hostname/IP does not match certificate's altnames: Host: smtp.example.com. is not in the cert's altnames: " +
          'DNS:mail.example.net',
      }),
    ).toBe('service');
    // The wording alone (no originalCode), under the codes nodemailer has used for them.
    const messages = [
      'self-signed certificate',
      'self-signed certificate in certificate chain',
      'self signed certificate',
      'unable to verify the first certificate',
      'unable to get local issuer certificate',
      'certificate has expired',
      "Hostname/IP does not match certificate's altnames: IP: 127.0.0.1 is not in the cert's list: ",
      'C0B7E4F2:error:0A00042E:SSL routines:ssl3_read_bytes:tlsv1 alert ' +
        'protocol version:ssl/record/rec_layer_s3.c:1586:SSL alert number 70',
      '40B7:error:0A000410:SSL routines:ssl3_read_bytes:sslv3 alert handshake failure',
      'C0B7:error:0A0000BF:SSL routines:tls_setup_handshake:no protocols available',
    ];
    for (const code of ['ESOCKET', 'ECONNECTION', 'ETLS', undefined]) {
      for (const message of messages)
        expect(classifySmtpError({ ...(code !== undefined ? { code } : {}), message }), `${code} ${message}`).toBe('service');
    }
  });

  it('TLS-looking failures that may pass on their own stay temporary', () => {
    // A relay's own 4xx about TLS is its temporary trouble, not a broken service.
    expect(
      classifySmtpError({
        code: 'EENVELOPE',
        command: 'STARTTLS',
        responseCode: 454,
        response: '454 4.7.0 TLS not available due to local problem',
        message: 'x',
      }),
    ).toBe('temporary');
    // The connection dropped during the handshake: a network failure.
    expect(
      classifySmtpError({
        code: 'ESOCKET',
        originalCode: 'ECONNRESET',
        message: 'Client network socket disconnected before secure TLS connection was established',
      }),
    ).toBe('temporary');
    expect(
      classifySmtpError({ code: 'ESOCKET', originalCode: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:465' }),
    ).toBe('temporary');
    expect(classifySmtpError({ code: 'ETIMEDOUT', message: 'Greeting never received' })).toBe('temporary');
    expect(
      classifySmtpError({ code: 'EDNS', originalCode: 'EAI_AGAIN', message: 'getaddrinfo EAI_AGAIN smtp.example.com' }),
    ).toBe('temporary');
  });

  it('mailbox-unknown replies to RCPT are bounces', () => {
    const rcpt = (responseCode: number, response: string) =>
      classifySmtpError({
        code: 'EENVELOPE',
        command: 'RCPT TO',
        responseCode,
        response,
        message: `Can't send mail - all recipients were rejected: ${response}`,
      });
    expect(rcpt(550, '550 5.1.1 User unknown')).toBe('mailbox');
    expect(rcpt(550, '550 5.1.1 <x@example.com>: Recipient address rejected: User unknown in virtual mailbox table')).toBe(
      'mailbox',
    );
    expect(rcpt(551, '551 5.1.6 User not local')).toBe('mailbox');
    expect(rcpt(553, '553 5.1.3 Invalid recipient address syntax')).toBe('mailbox');
    expect(rcpt(554, '554 5.1.1 No such user here')).toBe('mailbox');
    expect(rcpt(552, '552 5.1.0 Mailbox unavailable')).toBe('mailbox');
  });

  it('other 5xx replies are permanent failures, not bounces', () => {
    expect(
      classifySmtpError({
        code: 'EMESSAGE',
        command: 'DATA',
        responseCode: 554,
        response: '554 5.6.0 Message rejected',
        message: 'Message failed',
      }),
    ).toBe('permanent');
    expect(
      classifySmtpError({
        code: 'EMESSAGE',
        command: 'DATA',
        responseCode: 552,
        response: '552 5.3.4 Message size exceeds fixed limit',
        message: 'x',
      }),
    ).toBe('permanent');
    expect(
      classifySmtpError({
        code: 'EENVELOPE',
        command: 'RCPT TO',
        responseCode: 554,
        response: '554 5.7.1 Service unavailable; client host blocked',
        message: 'x',
      }),
    ).toBe('permanent');
  });

  it('a 5xx refusing MAIL FROM (nodemailer: EENVELOPE, command "MAIL FROM") is about the sender, not a recipient mailbox', () => {
    expect(
      classifySmtpError({
        code: 'EENVELOPE',
        command: 'MAIL FROM',
        responseCode: 550,
        response: '550 5.7.1 Sender address rejected',
        message: 'Mail command failed: 550 5.7.1 Sender address rejected',
      }),
    ).toBe('permanent');
  });

  it('a 550 5.7.1 policy refusal on RCPT (relaying denied) is not a mailbox-unknown bounce', () => {
    // Issue 4: bounced (and suppressed) only "when the reply says the mailbox does not exist".
    // A relay refusing to relay says nothing about the recipient's mailbox; suppressing every
    // recipient of a misconfigured relay would be wrong.
    expect(
      classifySmtpError({
        code: 'EENVELOPE',
        command: 'RCPT TO',
        responseCode: 550,
        response: '550 5.7.1 Relaying denied',
        message: "Can't send mail - all recipients were rejected: 550 5.7.1 Relaying denied",
      }),
    ).not.toBe('mailbox');
  });

  it('a mailbox-unknown reply to DATA is a bounce too (issue 4: "5xx on RCPT/DATA")', () => {
    expect(
      classifySmtpError({
        code: 'EMESSAGE',
        command: 'DATA',
        responseCode: 550,
        response: '550 5.1.1 <x@example.com>: User unknown',
        message: 'Message failed: 550 5.1.1 User unknown',
      }),
    ).toBe('mailbox');
  });

  it('4xx replies and network failures are temporary', () => {
    expect(
      classifySmtpError({
        code: 'EENVELOPE',
        command: 'RCPT TO',
        responseCode: 451,
        response: '451 4.3.0 Try again later',
        message: 'x',
      }),
    ).toBe('temporary');
    expect(
      classifySmtpError({
        code: 'EENVELOPE',
        command: 'RCPT TO',
        responseCode: 452,
        response: '452 4.2.2 Mailbox full',
        message: 'x',
      }),
    ).toBe('temporary');
    expect(
      classifySmtpError({
        code: 'EMESSAGE',
        command: 'DATA',
        responseCode: 421,
        response: '421 4.7.0 Too many connections',
        message: 'x',
      }),
    ).toBe('temporary');
    expect(classifySmtpError({ code: 'EPROTOCOL', responseCode: 421, response: '421 Service not available', message: 'x' })).toBe(
      'temporary',
    );
    expect(classifySmtpError({ code: 'ECONNECTION', message: 'connect ECONNREFUSED 127.0.0.1:2525' })).toBe('temporary');
    expect(classifySmtpError({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:2525' })).toBe('temporary');
    expect(classifySmtpError({ code: 'ETIMEDOUT', message: 'Connection timeout' })).toBe('temporary');
    expect(classifySmtpError({ code: 'EDNS', message: 'getaddrinfo ENOTFOUND smtp.example.invalid' })).toBe('temporary');
    expect(classifySmtpError({ message: 'socket hang up' })).toBe('temporary');
  });
});
