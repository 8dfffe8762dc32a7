import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import { openStore } from '../../src/storage/store.js';
import { tempDir, Closer } from '../support/cleanup.js';
import { freePort, startSink, waitFor } from '../support/smtp-sink.js';
import { requireBuild, startCli, type Running } from '../support/processes.js';
import { privateClusterPossible, startPrivateCluster } from '../support/private-pg.js';
import { CONTACT_TEMPLATE, PRIVATE_KEY, seedOrg } from '../support/seed.js';
import { smtpService } from '../support/delivery.js';

const possible = privateClusterPossible();
beforeAll(() => {
  if (possible) requireBuild();
});

/** Liveness bound of one request: an answer that takes longer is a hang (never a timing claim). */
const REQUEST_BOUND_MS = 30_000;

interface Answer {
  status: number;
  body: { message_id?: string; error?: { code?: string; details?: { reason?: string } } };
  retryAfter: string | null;
}

async function call(url: string, init: RequestInit = {}): Promise<Answer | 'hung' | 'no_answer'> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_BOUND_MS) });
    const text = await res.text();
    return {
      status: res.status,
      body: text === '' ? {} : (JSON.parse(text) as Answer['body']),
      retryAfter: res.headers.get('retry-after'),
    };
  } catch (err) {
    return (err as Error).name === 'TimeoutError' ? 'hung' : 'no_answer';
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Issue 25 §1: `pg_ctl stop/start` and `pg_ctl restart -m fast` of a private cluster under load,
 * against the real `mailroom serve` and `mailroom worker` processes delivering to an SMTP sink.
 * Before the fix both processes exited 1 ("Unhandled 'error' event … BoundPool", 57P01).
 */
describe('a PostgreSQL restart under load', () => {
  const c = new Closer();
  const closer = new Closer();
  c.defer(() => closer.closeAll());
  afterAll(() => c.closeAll());

  it.skipIf(!possible)(
    'processes stay up, answer 503 while it is down, recover by themselves, lose nothing',
    { timeout: 240_000 },
    async () => {
      const cluster = await startPrivateCluster();
      c.defer(() => cluster.destroy());
      const dbUrl = `${cluster.url}?schema=drill`;
      const sink = await startSink({}, closer);
      const seeding = await openStore(dbUrl, { clock: systemClock });
      await seedOrg(seeding, { credits: 100_000, services: [smtpService(sink.port)], templates: [CONTACT_TEMPLATE] });
      await seeding.close();

      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const common = {
        MAILROOM_DATABASE_URL: dbUrl,
        MAILROOM_LOG_LEVEL: 'warn',
        MAILROOM_ADMIN_TOKEN: 'drill-admin-token-0123456789abcdef0123',
      };
      const api = startCli(
        ['serve'],
        {
          ...common,
          MAILROOM_DATA_DIR: tempDir(c),
          MAILROOM_PORT: String(port),
          MAILROOM_HOST: '127.0.0.1',
          MAILROOM_BASE_URL: base,
          MAILROOM_WORKER: 'off',
        },
        c,
      );
      // The default 5-minute lease: a message left to wait it out fails the drill's bounded waits.
      const worker = startCli(['worker'], { ...common, MAILROOM_DATA_DIR: tempDir(c), MAILROOM_WORKER_POLL_MS: '50' }, c);
      await api.waitForOutput('listening on');
      await worker.waitForOutput('mailroom worker running');
      const alive = (p: Running) => p.child.exitCode === null && p.child.signalCode === null;
      const outputs = () =>
        `--- serve ---\n${api.output()}\n--- worker ---\n${worker.output()}\n--- postgres ---\n${cluster.log().slice(-3000)}`;

      // Clients: each sends with its own Idempotency-Key and retries that same key until 202.
      const accepted = new Map<string, string>();
      const seen = new Map<string, number>();
      const outage503: Answer[] = [];
      let hung = 0;
      let running = true;
      const send = (key: string) =>
        call(`${base}/v1/send`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${PRIVATE_KEY}`, 'idempotency-key': key },
          body: JSON.stringify({
            template_id: 'contact',
            template_params: { name: 'Ada', email: 'ada@example.org', message: key },
          }),
        });
      const sendUntilAccepted = async (key: string, keepGoing: () => boolean): Promise<void> => {
        while (keepGoing()) {
          const a = await send(key);
          const label = typeof a === 'string' ? a : String(a.status);
          seen.set(label, (seen.get(label) ?? 0) + 1);
          if (a === 'hung') hung += 1;
          if (typeof a !== 'string' && a.status === 202 && a.body.message_id !== undefined) {
            accepted.set(key, a.body.message_id);
            return;
          }
          if (typeof a !== 'string' && a.status === 503) outage503.push(a);
          // A client's own pace between tries against real processes (not a wait for a state):
          // 100 ms, or the plan's one-second window after a 429.
          await sleep(typeof a !== 'string' && a.status === 429 ? 1000 : 100);
        }
      };
      const pending = new Set<string>();
      const clients = Array.from({ length: 4 }, async (_, k) => {
        for (let n = 0; running; n += 1) {
          const key = `drill-${k}-${n}`;
          pending.add(key);
          await sendUntilAccepted(key, () => running);
          if (accepted.has(key)) pending.delete(key);
        }
      });
      const firstDelivered = () => sink.received.length;
      await waitFor(
        () => accepted.size >= 20 && firstDelivered() >= 10,
        60_000,
        'sends accepted and delivered before the outage',
      );

      // 1. Stopped (fast: sessions terminated with 57P01), and down until both processes have met
      // it: clients answered 503, the worker's claims paused.
      cluster.stop('fast');
      const since503 = outage503.length;
      await waitFor(
        () => outage503.length >= since503 + 4 && worker.output().includes('claiming paused'),
        30_000,
        'both processes to meet the outage',
      );
      expect(alive(api), outputs()).toBe(true);
      expect(alive(worker), outputs()).toBe(true);
      const down = await send('drill-while-down');
      expect(down, outputs()).not.toBe('hung');
      expect(down).not.toBe('no_answer');
      const answer = down as Answer;
      expect(answer.status).toBe(503);
      expect(answer.body.error?.code).toBe('service_unavailable');
      expect(answer.body.error?.details?.reason).toBe('database_unavailable');
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
      const health = await call(`${base}/v1/health`);
      expect(health).not.toBe('hung');
      expect((health as Answer).status).toBe(503);
      expect((health as Answer).body.error?.details?.reason).toBe('database_unavailable');

      // 2. Back: the API answers 202 and the worker delivers again, without a restart of either.
      const deliveredBefore = sink.received.length;
      cluster.start();
      const back = Date.now();
      await waitFor(
        async () => {
          const a = await send(`drill-after-${Date.now()}`);
          if (typeof a !== 'string' && a.status === 202 && a.body.message_id !== undefined)
            accepted.set(`after-${a.body.message_id}`, a.body.message_id);
          return typeof a !== 'string' && a.status === 202;
        },
        60_000,
        'the API to accept again',
      );
      const apiRecoveryMs = Date.now() - back;
      await waitFor(() => sink.received.length > deliveredBefore, 60_000, 'the worker to deliver again');
      const workerRecoveryMs = Date.now() - back;

      // 3. pg_ctl restart -m fast with sends in flight (the case).
      const beforeRestart = accepted.size;
      await waitFor(() => accepted.size >= beforeRestart + 10, 60_000, 'more sends before the restart');
      const restarted = Date.now();
      cluster.restart('fast');
      const restartedAt = Date.now();
      await waitFor(() => accepted.size >= beforeRestart + 30, 60_000, 'sends accepted after the restart');
      const restartRecoveryMs = Date.now() - restartedAt;

      running = false;
      await Promise.all(clients);
      // Every key that never got its 202 is retried with the same key now: it succeeds.
      const retried = [...pending, 'drill-while-down'];
      await Promise.all(retried.map((key) => sendUntilAccepted(key, () => true)));
      for (const key of retried) expect(accepted.has(key), key).toBe(true);

      // Nothing acknowledged is lost: every accepted message reaches the sink, duplicates only
      // with the same Message-ID (at-least-once), and nothing else arrives.
      const ids = new Set(accepted.values());
      const idOf = (messageId: string | undefined) => /msg_[A-Za-z0-9_-]+/.exec(messageId ?? '')?.[0] ?? messageId ?? '';
      const missing = () => {
        const got = new Set(sink.received.map((r) => idOf(r.messageId)));
        return [...ids].filter((id) => !got.has(id));
      };
      await waitFor(() => missing().length === 0, 90_000, 'every accepted message to reach the sink').catch(
        async (err: unknown) => {
          const store = await openStore(dbUrl, { clock: systemClock, migrate: false });
          const rows = await Promise.all(
            missing().map(async (id) => {
              const m = await store.messages.get('acme', id);
              return `${id}: ${m?.status ?? 'not stored'}`;
            }),
          );
          await store.close();
          throw new Error(`${String(err)}\nmissing ${rows.join(', ')}\n${outputs()}`);
        },
      );
      const received = sink.received.map((r) => idOf(r.messageId));
      expect(new Set(received)).toEqual(ids);

      expect(alive(api), outputs()).toBe(true);
      expect(alive(worker), outputs()).toBe(true);
      expect(hung).toBe(0);
      expect(seen.get('500') ?? 0, JSON.stringify(Object.fromEntries(seen))).toBe(0);
      for (const a of outage503) {
        expect(a.body.error?.code).toBe('service_unavailable');
        expect(Number(a.retryAfter)).toBeGreaterThan(0);
      }
      expect(`${api.output()}${worker.output()}`).not.toMatch(/Unhandled 'error' event/);
      // The outages are logged as warnings, a line or two each, never an error with a stack per
      // request or per poll.
      const lines = `${api.output()}\n${worker.output()}`.split('\n');
      expect(lines.filter((l) => l.includes('"level":50') || l.includes('"level":60'))).toEqual([]);
      expect(lines.filter((l) => l.includes('"level":40')).length).toBeLessThan(20);

      const store = await openStore(dbUrl, { clock: systemClock, migrate: false });
      closer.defer(() => store.close());
      const healthy = await call(`${base}/v1/health`);
      expect((healthy as Answer).status).toBe(200);
      console.log(
        `[pg-restart drill] stop/start: API accepted again ${apiRecoveryMs} ms and the worker ` +
          `delivered again ${workerRecoveryMs} ms after the server was back; restart -m fast ` +
          `(${restartedAt - restarted} ms): 30 more accepted ${restartRecoveryMs} ms after; ` +
          `accepted ${ids.size}, received ${received.length} (${received.length - ids.size} ` +
          `duplicates with the same Message-ID); answers ${JSON.stringify(Object.fromEntries(seen))}`,
      );
    },
  );
});
