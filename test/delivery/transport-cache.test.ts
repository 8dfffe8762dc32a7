import { describe, expect, it } from 'vitest';
import { TransportCache } from '../../src/delivery/transport-cache.js';
import type { DeliveryReceipt, OutgoingEmail, Transport } from '../../src/delivery/transport.js';
import type { Service } from '../../src/domain/types.js';
import { renderedEmail } from '../support/delivery.js';

/**
 * Review 14 finding 7: a service's settings changing while a send is in flight must not close
 * the transport under it. A closed SES transport destroys its client, which aborts the request;
 * the attempt is then retried, and if SES had already taken the message it goes out twice.
 */

function service(settings: Record<string, unknown>): Service {
  return {
    org_id: 'acme',
    id: 'api',
    provider: 'fake',
    is_default: true,
    max_per_second: null,
    version: 1,
    created_at: 0,
    updated_at: 0,
    settings,
  };
}

const mail = (i: number): OutgoingEmail => ({
  messageId: `msg_${i}`,
  headerMessageId: `<msg_${i}@mailroom.test>`,
  email: renderedEmail(i),
  attachments: [],
});

/**
 * A transport whose sends wait until released, and whose close aborts the sends still waiting,
 * as the AWS SDK's client.destroy() does to its requests.
 */
function slowTransport(name: string) {
  const waiting = new Map<string, { resolve: (r: DeliveryReceipt) => void; reject: (e: Error) => void }>();
  const log = { sent: [] as string[], closes: 0 };
  const transport: Transport = {
    send: (m) =>
      new Promise<DeliveryReceipt>((resolve, reject) => {
        if (log.closes > 0) {
          reject(new Error(`${name} is closed`));
          return;
        }
        waiting.set(m.messageId, {
          resolve: (r) => {
            log.sent.push(m.messageId);
            resolve(r);
          },
          reject,
        });
      }),
    close: async () => {
      log.closes += 1;
      for (const w of waiting.values()) w.reject(new Error('Request aborted: the client was destroyed'));
      waiting.clear();
    },
  };
  const release = (messageId: string) => {
    const w = waiting.get(messageId);
    if (w === undefined) throw new Error(`${messageId} is not in flight at ${name}`);
    waiting.delete(messageId);
    w.resolve({ response: `${name} 200 ${messageId}`, providerMessageId: `${name}-${messageId}` });
  };
  return { transport, log, release, inFlight: () => [...waiting.keys()] };
}

const turns = async () => {
  for (let i = 0; i < 5; i += 1) await new Promise((r) => setImmediate(r));
};

function cacheOf(...built: Array<ReturnType<typeof slowTransport>>) {
  let n = 0;
  return new TransportCache('/tmp', {
    fake: () => {
      const next = built[n];
      n += 1;
      if (next === undefined) throw new Error('no more transports');
      return next.transport;
    },
  });
}

describe('TransportCache: a settings change while sends are in flight', () => {
  it('the old transport finishes its sends and closes only then; new sends use the new settings', async () => {
    const old = slowTransport('old');
    const fresh = slowTransport('new');
    const cache = cacheOf(old, fresh);
    const before = cache.forService(service({ fake: { key: 'a' } }));
    if (before === undefined) throw new Error('no transport');
    const inFlight = before.send(mail(1));
    await turns();

    const after = cache.forService(service({ fake: { key: 'b' } }));
    if (after === undefined) throw new Error('no transport');
    expect(after).not.toBe(before);
    await turns();
    // Not closed under the send: it is still in flight, not aborted.
    expect(old.log.closes).toBe(0);
    expect(old.inFlight()).toEqual(['msg_1']);

    const next = after.send(mail(2));
    await turns();
    expect(fresh.inFlight()).toEqual(['msg_2']);

    old.release('msg_1');
    await expect(inFlight).resolves.toMatchObject({ response: 'old 200 msg_1', providerMessageId: 'old-msg_1' });
    await turns();
    expect(old.log.closes).toBe(1);
    fresh.release('msg_2');
    await expect(next).resolves.toMatchObject({ response: 'new 200 msg_2' });
    expect(old.log.sent).toEqual(['msg_1']);
    expect(fresh.log.sent).toEqual(['msg_2']);
    expect(fresh.log.closes).toBe(0);
    await cache.close();
    expect(fresh.log.closes).toBe(1);
    expect(old.log.closes).toBe(1);
  });

  it('a send through the replaced transport, taken before the change (a pacing wait), goes through the new one', async () => {
    const old = slowTransport('old');
    const fresh = slowTransport('new');
    const cache = cacheOf(old, fresh);
    const taken = cache.forService(service({ fake: { key: 'a' } }));
    if (taken === undefined) throw new Error('no transport');
    cache.forService(service({ fake: { key: 'b' } }));
    await turns();
    // Nothing was in flight: the old one closed at once.
    expect(old.log.closes).toBe(1);

    const sending = taken.send(mail(3));
    await turns();
    expect(fresh.inFlight()).toEqual(['msg_3']);
    fresh.release('msg_3');
    await expect(sending).resolves.toMatchObject({ response: 'new 200 msg_3' });
    await cache.close();
  });

  it('stopping while a replaced transport still sends closes it (once), with the others', async () => {
    const old = slowTransport('old');
    const fresh = slowTransport('new');
    const cache = cacheOf(old, fresh);
    const before = cache.forService(service({ fake: { key: 'a' } }));
    const inFlight = before?.send(mail(4)).catch((e: unknown) => e);
    await turns();
    cache.forService(service({ fake: { key: 'b' } }));
    await cache.close();
    expect(await inFlight).toBeInstanceOf(Error);
    await turns();
    expect(old.log.closes).toBe(1);
    expect(fresh.log.closes).toBe(1);
  });
});
