import dns from 'node:dns';
import { afterEach, describe, expect, it } from 'vitest';
import type { Service } from '../../src/domain/types.js';
import { DeliveryError } from '../../src/delivery/transport.js';
import { createSmtpTransport } from '../../src/delivery/transports/smtp.js';
import { deliveryHarness, renderedEmail, row, seedSmtpOrg, send, smtpService } from '../support/delivery.js';
import { eventTypes } from '../support/stored.js';
import { describeDialects } from '../support/dialects.js';

// Issue 11 §7: a relay host that does not resolve is a configuration error, not a busy server.
// Names under `.invalid` never resolve (RFC 6761).

type LookupCallback = (err: NodeJS.ErrnoException | null, addresses?: Array<{ address: string; family: number }>) => void;
type Answer = 'real' | NodeJS.ErrnoException | string;

/**
 * Wraps dns.lookup (which nodemailer falls back to once resolve4/resolve6 found nothing): counts
 * the lookups of each host and lets a test answer them (an error, an address, or the real one).
 */
const originalLookup = dns.lookup;
const lookups = new Map<string, number>();
function answerLookups(answer: (host: string, n: number) => Answer): void {
  const patched = (host: string, options: unknown, callback: LookupCallback) => {
    const n = (lookups.get(host) ?? 0) + 1;
    lookups.set(host, n);
    const a = answer(host, n);
    if (a === 'real')
      return (originalLookup as unknown as (h: string, o: unknown, c: LookupCallback) => void)(host, options, callback);
    setImmediate(() => (typeof a === 'string' ? callback(null, [{ address: a, family: 4 }]) : callback(a)));
  };
  (dns as unknown as { lookup: typeof patched }).lookup = patched;
}
afterEach(() => {
  (dns as unknown as { lookup: typeof originalLookup }).lookup = originalLookup;
  lookups.clear();
});

const dnsError = (code: string, host: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`getaddrinfo ${code} ${host}`), {
    code,
    errno: code === 'ENOTFOUND' ? -3008 : -3001,
    syscall: 'getaddrinfo',
    hostname: host,
  });

function service(host: string, port = 25): Service {
  return {
    org_id: 'acme',
    id: 'smtp',
    provider: 'smtp',
    is_default: true,
    max_per_second: null,
    version: 1,
    created_at: 0,
    updated_at: 0,
    settings: { smtp: { host, port, secure: false, user: '', pass: '', dkim: null } },
  } as unknown as Service;
}

const mail = { messageId: 'msg_1', headerMessageId: '<msg_1@mailroom.test>', email: renderedEmail(1), attachments: [] };

describe('the SMTP transport and a relay host that does not resolve', () => {
  it('ENOTFOUND twice (one quick retry): a service error naming the host, not a temporary one', async () => {
    answerLookups(() => 'real');
    const host = 'smtp.mailroom-typo.invalid';
    const transport = createSmtpTransport({ dnsRetryMs: 20 })(service(host), { dataDir: '/nonexistent' });
    try {
      const err = await transport.send(mail).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DeliveryError);
      expect((err as DeliveryError).kind).toBe('service');
      expect((err as DeliveryError).message).toMatch(/relay host smtp\.mailroom-typo\.invalid does not resolve \(ENOTFOUND/);
      expect(lookups.get(host)).toBe(2);
    } finally {
      await transport.close();
    }
  });

  it('a name that resolves on the quick retry is sent', async () => {
    const { startSink } = await import('../support/smtp-sink.js');
    const { Closer } = await import('../support/cleanup.js');
    const closer = new Closer();
    try {
      const sink = await startSink({}, closer);
      const host = 'flaky.mailroom.invalid';
      answerLookups((h, n) => (h === host && n === 1 ? dnsError('ENOTFOUND', host) : h === host ? '127.0.0.1' : 'real'));
      const transport = createSmtpTransport({ dnsRetryMs: 20 })(service(host, sink.port), { dataDir: '/nonexistent' });
      closer.defer(() => transport.close());
      await transport.send(mail);
      expect(sink.received).toHaveLength(1);
      expect(lookups.get(host)).toBe(2);
    } finally {
      await closer.closeAll();
    }
  });

  it('EAI_AGAIN (the resolver gave no answer) says nothing about the name: temporary, retried with backoff', async () => {
    const host = 'smtp.mailroom-nodns.invalid';
    answerLookups((h) => (h === host ? dnsError('EAI_AGAIN', host) : 'real'));
    const transport = createSmtpTransport({ dnsRetryMs: 20 })(service(host), { dataDir: '/nonexistent' });
    try {
      const err = await transport.send(mail).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((err as DeliveryError).kind).toBe('temporary');
    } finally {
      await transport.close();
    }
  });
});

describeDialects('a relay host that does not resolve, through the worker on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)('the message is held as held_service_error with the reason, not deferred for 24 hours', async () => {
    const t = await h.app();
    await seedSmtpOrg(t.store, { ...smtpService(2525), smtp: { host: 'smtp.gmail.invalid', port: 2525, secure: false } });
    const { worker } = h.worker(t, { transports: { smtp: createSmtpTransport({ dnsRetryMs: 20 }) } });
    const id = await send(t);
    expect(await worker.runOnce()).toBe(1);
    const m = await row(t.store, id);
    expect(m.status).toBe('held_service_error');
    expect(m.next_attempt_at).toBeNull();
    expect(m.last_error).toMatch(
      /relay host smtp\.gmail\.invalid does not resolve \(ENOTFOUND, twice\): check the service's smtp\.host/,
    );
    expect(await eventTypes(t.store, id)).toEqual(['queued', 'sending', 'held_service_error']);
    // Held: no later round tries it again until an operator changes the service.
    t.clock.advance(3_600_000);
    expect(await worker.runOnce()).toBe(0);
  });
});
