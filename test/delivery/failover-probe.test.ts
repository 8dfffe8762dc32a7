import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LocalBreakers, type Breakers } from '../../src/delivery/breaker.js';
import { RedisBreakers } from '../../src/delivery/breaker-redis.js';
import { DEFAULT_RETRY } from '../../src/delivery/retry.js';
import type { TransportFactory } from '../../src/delivery/transport.js';
import { smtpTransport } from '../../src/delivery/transports/smtp.js';
import type { Clock, ManualClock } from '../../src/domain/clock.js';
import { closerPerTest, type Closer } from '../support/cleanup.js';
import { REDIS_URL, redisAvailable } from '../support/redis.js';
import { startSink, waitFor } from '../support/smtp-sink.js';
import { insertQueued, privateHeaders, row } from '../support/delivery.js';
import { failoverSetup, type FailoverSetup } from '../support/failover.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Failover at low volume (issue 25, 6): a lone message, a dead primary (its SMTP port refuses
 * connections) and a healthy backup. The retry backoff (30 s, 1, 2, 4 min) outlasts the
 * breaker's 30 s, so every retry of the lone message found the breaker half-open and the
 * message was its probe, against the dead primary, until it failed. Now it is the probe at most
 * once in a row, and not at all where the service has a synthetic probe (the service test's
 * check). The breaker is opened as earlier, busier traffic would (five failures reported).
 */

const redisUp = await redisAvailable();
const PRIMARY = 'acme/primary';
const KINDS = ['memory', 'redis'] as const;

/** The breakers each worker uses: memory, one set; Redis, one client per worker (two processes). */
function breakersFor(kind: (typeof KINDS)[number], clock: Clock, closer: Closer): [Breakers, Breakers] {
  if (kind === 'memory') {
    const one = new LocalBreakers(clock);
    return [one, one];
  }
  const prefix = `test-probe-${process.pid}-${Math.random().toString(36).slice(2)}:`;
  const make = () => {
    const client = new Redis(REDIS_URL);
    closer.defer(() =>
      client.quit().then(
        () => undefined,
        () => undefined,
      ),
    );
    return new RedisBreakers(client, clock, { prefix });
  };
  return [make(), make()];
}

/** The setup's ManualClock, for breakers made before the setup (it exposes them). */
function later() {
  let bound: ManualClock | undefined;
  return {
    clock: {
      now: () => {
        if (bound === undefined) throw new Error('no clock yet');
        return bound.now();
      },
    } satisfies Clock,
    bind<T extends { clock: ManualClock }>(s: T): T {
      bound = s.clock;
      return s;
    },
  };
}

/** SMTP as it is, without its check: a provider with no synthetic probe. */
const smtpWithoutCheck: TransportFactory = (service, context) => {
  const t = smtpTransport(service, context);
  return { send: (mail) => t.send(mail), close: () => t.close() };
};

interface Shown {
  status: string;
  sent_via?: string;
  events: Array<{ type: string; details?: Record<string, unknown> }>;
}

async function shown(s: FailoverSetup, id: string): Promise<Shown> {
  const res = await s.app.inject({ method: 'GET', url: `/v1/messages/${id}`, headers: privateHeaders });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Shown>();
}

const breakerOf = async (s: FailoverSetup): Promise<{ state: string; last_error?: string }> =>
  (await s.admin('/organizations/acme/services/primary')).breaker as { state: string; last_error?: string };

/** The primary goes down (nothing listens on its port) and earlier traffic opened its breaker. */
async function primaryDown(s: FailoverSetup, breakers: Breakers): Promise<void> {
  await s.primary.close();
  for (let i = 0; i < 5; i++) await breakers.failed(PRIMARY, { kind: 'pass' }, 'connect ECONNREFUSED (earlier traffic)');
  expect((await breakerOf(s)).state).toBe('open');
}

describeDialects('failover at low volume on %s', (dialect, pgSkip) => {
  const closer = closerPerTest();
  const lateClock = later();

  describe.each(KINDS)('with %s breakers', (kind) => {
    const skip = pgSkip || (kind === 'redis' && !redisUp);

    it.skipIf(skip)(
      'without a synthetic probe, a lone message that failed as the probe fails over on its next attempt (two workers)',
      async () => {
        const [a, b] = breakersFor(kind, lateClock.clock, closer);
        const s = lateClock.bind(await failoverSetup(dialect, closer, { breakers: a }));
        const transports = { smtp: smtpWithoutCheck };
        const workers = [
          s.worker({ breakers: a, transports, retry: DEFAULT_RETRY }),
          s.worker({ breakers: b, transports, retry: DEFAULT_RETRY }),
        ];
        await primaryDown(s, a);
        s.clock.advance(30_000); // half-open: the lone message arrives
        const [id] = await insertQueued(s.store, 1, s.clock.now(), 'primary');

        // Its first attempt is the probe (nothing else to probe with), and fails.
        expect(await workers[0]!.runOnce()).toBe(1);
        const first = await row(s.store, id!);
        expect(first).toMatchObject({ status: 'queued', attempts: 1 });
        expect((await breakerOf(s)).state).toBe('open');

        // Past each backoff (30 s, then 1, 2, 4 min: each finds the breaker half-open again), the
        // other worker takes it: it goes through the chain, not to the dead primary again.
        for (let round = 0; round < 9 && (await row(s.store, id!)).status === 'queued'; round++) {
          const due = Number((await row(s.store, id!)).next_attempt_at);
          s.clock.set(Math.max(s.clock.now(), due));
          await workers[(round + 1) % 2]!.runOnce();
        }
        const m = await shown(s, id!);
        expect(m).toMatchObject({ status: 'sent', sent_via: 'backup' });
        expect(m.events.filter((e) => e.type === 'deferred')).toHaveLength(1);
        expect(s.backup.received).toHaveLength(1);
        expect((await row(s.store, id!)).attempts).toBe(2);
      },
    );

    it.skipIf(skip)(
      'a message that failed as the probe probes again when nothing later in its chain takes it, rather than wait',
      async () => {
        const [breakers] = breakersFor(kind, lateClock.clock, closer);
        const s = lateClock.bind(await failoverSetup(dialect, closer, { breakers }));
        const worker = s.worker({ breakers, transports: { smtp: smtpWithoutCheck }, retry: DEFAULT_RETRY });
        await primaryDown(s, breakers);
        s.clock.advance(30_000);
        const [id] = await insertQueued(s.store, 1, s.clock.now(), 'primary');
        expect(await worker.runOnce()).toBe(1); // the probe, failed
        // The backup's breaker opens meanwhile and is still open at the retry (30 s later).
        s.clock.advance(10_000);
        for (let i = 0; i < 5; i++) await breakers.failed('acme/backup', { kind: 'pass' }, 'other traffic');
        s.clock.set(Number((await row(s.store, id!)).next_attempt_at));
        expect(await worker.runOnce()).toBe(1);
        const m = await row(s.store, id!);
        expect(m).toMatchObject({ status: 'queued', attempts: 2 });
        expect((await breakerOf(s)).last_error).toMatch(/ECONNREFUSED/);
        expect(s.backup.received).toHaveLength(0);
      },
    );

    it.skipIf(skip)(
      'with a synthetic probe, customer mail never goes to the dead primary; the probe closes the breaker when it is back',
      async () => {
        const [breakers] = breakersFor(kind, lateClock.clock, closer);
        const s = lateClock.bind(await failoverSetup(dialect, closer, { breakers }));
        const worker = s.worker({ retry: DEFAULT_RETRY });
        await primaryDown(s, breakers);

        // Two lone messages, each arriving as the breaker turns half-open: each goes through the
        // backup at its first attempt while the service test's check probes the primary, fails,
        // and opens the breaker for another 30 s.
        const lone: string[] = [];
        for (let i = 0; i < 2; i++) {
          s.clock.advance(30_000);
          const [id] = await insertQueued(s.store, 1, s.clock.now(), 'primary');
          lone.push(id!);
          expect(await worker.runOnce()).toBe(1);
          await waitFor(async () => (await breakerOf(s)).state === 'open', 20_000, 'the synthetic probe reopening the breaker');
          expect((await breakerOf(s)).last_error).toMatch(/^synthetic probe: .*ECONNREFUSED/);
        }
        for (const id of lone) {
          const m = await shown(s, id);
          expect(m).toMatchObject({ status: 'sent', sent_via: 'backup' });
          expect(m.events.map((e) => e.type)).toEqual(['queued', 'sending', 'sent']);
        }

        // The primary comes back: at half-open the next message still fails over (the check is
        // under way), the check passes and closes the breaker, without sending any mail.
        const back = await startSink({ port: s.primary.port, clock: s.clock }, closer);
        s.clock.advance(30_000);
        const [during] = await insertQueued(s.store, 1, s.clock.now(), 'primary');
        expect(await worker.runOnce()).toBe(1);
        await waitFor(async () => (await breakerOf(s)).state === 'closed', 20_000, 'the synthetic probe closing the breaker');
        expect(await shown(s, during!)).toMatchObject({ status: 'sent', sent_via: 'backup' });
        expect(back.connections).toBeGreaterThanOrEqual(1);
        expect(back.received).toHaveLength(0);

        // Closed (on probation): mail goes through the primary again, and its success ends the probation.
        s.clock.advance(1_000);
        const [after] = await insertQueued(s.store, 1, s.clock.now(), 'primary');
        expect(await worker.runOnce()).toBe(1);
        expect(await shown(s, after!)).toMatchObject({ status: 'sent', sent_via: 'primary' });
        expect(back.received).toHaveLength(1);
        expect(s.backup.received).toHaveLength(3);
      },
    );
  });
});
