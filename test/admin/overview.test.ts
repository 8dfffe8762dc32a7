import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dailyRows } from '../../src/admin/overview.js';
import { RedisBreakers } from '../../src/delivery/breaker-redis.js';
import { exposeBreakers, LocalBreakers, type Breakers } from '../../src/delivery/breaker.js';
import type { MessageStatus } from '../../src/domain/types.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { buildTestApp, testConfig, type TestApp } from '../support/app.js';
import { setMessageFields, insertMessage } from '../support/db.js';
import { REDIS_URL, redisAvailable } from '../support/redis.js';
import { seedOrg } from '../support/seed.js';
import { freshStore } from '../support/stores.js';
import { admin } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { describeDialects } from '../support/dialects.js';

const redisUp = await redisAvailable();

const DAY = 86_400_000;

interface Overview {
  organization_id: string;
  days: number;
  generated_at: string;
  daily: Array<{
    date: string;
    accepted: number;
    delivered: number;
    bounced: number;
    complained: number;
    failed: number;
    held: number;
  }>;
  queue: { depth: number; oldest_due_at: string | null; oldest_due_age_seconds: number | null };
  credits: { balance: number | null; held: number };
  held_messages: number;
  services: Array<{
    id: string;
    provider: string;
    default: boolean;
    breaker: string;
    breaker_scope: string;
    last_error: { at: string; message: string; message_id: string | null } | null;
  }>;
}

/** An app whose breakers the test holds (as buildServices would expose them), over a fresh store. */
async function appWith(
  dialect: 'sqlite' | 'postgres',
  breakers: (clock: TestApp['clock']) => Breakers,
  env: Record<string, string> = {},
): Promise<TestApp> {
  const ts = await freshStore(dialect);
  const metrics = createMetrics();
  exposeBreakers(metrics, breakers(ts.clock));
  const config = testConfig(env);
  const app = await buildTestApp(config, { store: ts.store, clock: ts.clock, metrics });
  await app.ready();
  return {
    ...ts,
    app,
    config,
    cleanup: async () => {
      await app.close();
      await ts.cleanup();
    },
  };
}

async function seed(t: TestApp): Promise<void> {
  await seedOrg(t.store, {
    credits: 42,
    services: [
      { id: 'outbox', provider: 'outbox', default: true },
      { id: 'second', provider: 'outbox' },
    ],
  });
  await seedOrg(t.store, { id: 'other', keys: [] });
}

/** Messages created `daysAgo` days before now (at the same time of day), one per status. */
async function messages(t: TestApp, daysAgo: number, statuses: MessageStatus[], orgId = 'acme'): Promise<string[]> {
  const ids: string[] = [];
  for (const status of statuses) {
    const id = `msg_${orgId}_${daysAgo}_${ids.length}_${status}`.slice(0, 60);
    await insertMessage(t.store, orgId, id, status, t.clock.now() - daysAgo * DAY, status !== 'held');
    ids.push(id);
  }
  return ids;
}

const get = async (t: TestApp, query = ''): Promise<Overview> => {
  const res = await admin(t, 'GET', `/organizations/acme/overview${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Overview>();
};

describe('dailyRows', () => {
  it('one row per day, oldest first, zeros included; held counts both holds; other statuses only in accepted', () => {
    const rows = dailyRows(
      [
        { day: 100, status: 'delivered', count: 2 },
        { day: 100, status: 'sent', count: 1 },
        { day: 102, status: 'held', count: 1 },
        { day: 102, status: 'held_service_error', count: 2 },
        { day: 99, status: 'failed', count: 9 },
      ],
      100,
      3,
    );
    expect(rows).toEqual([
      { date: '1970-04-11', accepted: 3, delivered: 2, bounced: 0, complained: 0, failed: 0, held: 0 },
      { date: '1970-04-12', accepted: 0, delivered: 0, bounced: 0, complained: 0, failed: 0, held: 0 },
      { date: '1970-04-13', accepted: 3, delivered: 0, bounced: 0, complained: 0, failed: 0, held: 3 },
    ]);
  });
});

describeDialects('admin overview on %s', (dialect, skip) => {
  let t!: TestApp;
  let breakers!: LocalBreakers;
  beforeEach(async () => {
    if (skip) return;
    t = await appWith(dialect, (clock) => (breakers = new LocalBreakers(clock)));
    // Midday, so "days ago" stays on its UTC day.
    t.clock.advance(12 * 3_600_000);
  });
  afterEach(async () => {
    if (!skip) await t.cleanup();
  });

  it.skipIf(skip)('counts messages per UTC day by their status now, over 7, 30 or 90 days', async () => {
    await seed(t);
    await messages(t, 0, ['queued', 'queued', 'delivered', 'held', 'held_service_error', 'sent']);
    await messages(t, 1, ['bounced', 'complained', 'failed', 'delivered']);
    await messages(t, 8, ['delivered', 'failed']);
    await messages(t, 45, ['delivered']);
    await messages(t, 0, ['delivered', 'failed'], 'other');

    const week = await get(t);
    expect(week).toMatchObject({ organization_id: 'acme', days: 7, generated_at: '2026-01-01T12:00:00.000Z', held_messages: 2 });
    expect(week.daily.map((d) => d.date)).toEqual([
      '2025-12-26',
      '2025-12-27',
      '2025-12-28',
      '2025-12-29',
      '2025-12-30',
      '2025-12-31',
      '2026-01-01',
    ]);
    expect(week.daily[6]).toEqual({
      date: '2026-01-01',
      accepted: 6,
      delivered: 1,
      bounced: 0,
      complained: 0,
      failed: 0,
      held: 2,
    });
    expect(week.daily[5]).toEqual({
      date: '2025-12-31',
      accepted: 4,
      delivered: 1,
      bounced: 1,
      complained: 1,
      failed: 1,
      held: 0,
    });
    expect(week.daily.slice(0, 5).every((d) => d.accepted === 0)).toBe(true);

    const month = await get(t, '?days=30');
    expect(month.daily).toHaveLength(30);
    expect(month.daily.reduce((n, d) => n + d.accepted, 0)).toBe(12);
    expect(month.daily.find((d) => d.date === '2025-12-24')).toMatchObject({ accepted: 2, delivered: 1, failed: 1 });
    const quarter = await get(t, '?days=90');
    expect(quarter.daily).toHaveLength(90);
    expect(quarter.daily.reduce((n, d) => n + d.accepted, 0)).toBe(13);
  });

  it.skipIf(skip)('the queue, credits and held messages', async () => {
    await seed(t);
    expect((await get(t)).queue).toEqual({ depth: 0, oldest_due_at: null, oldest_due_age_seconds: null });
    const [, later = ''] = await messages(t, 0, ['queued', 'queued', 'held']);
    await messages(t, 0, ['queued'], 'other');
    // One waits for a retry an hour from now: queued, not due.
    await setMessageFields(t.store, later, { next_attempt_at: t.clock.now() + 3_600_000 });
    t.clock.advance(90_000);
    const o = await get(t);
    expect(o.queue).toEqual({ depth: 2, oldest_due_at: '2026-01-01T12:00:00.000Z', oldest_due_age_seconds: 90 });
    expect(o.credits).toEqual({
      balance: 42,
      overdraft: 0,
      public_overdraft: false,
      when_out_of_credits: 'hold',
      hold_queue_limit: 1000,
      held: 1,
    });
    expect(o.held_messages).toBe(1);
  });

  it.skipIf(skip)("each service's breaker and newest failure", async () => {
    await seed(t);
    const o = await get(t);
    expect(o.services).toEqual([
      { id: 'outbox', provider: 'outbox', default: true, breaker: 'closed', breaker_scope: 'process', last_error: null },
      { id: 'second', provider: 'outbox', default: false, breaker: 'closed', breaker_scope: 'process', last_error: null },
    ]);

    const [failed = '', deferred = '', bounced = ''] = await messages(t, 0, ['failed', 'queued', 'bounced']);
    const at = t.clock.now();
    await t.store.messages.appendEvent(failed, 'failed', at, at, { reason: '550 5.1.1 unknown user' });
    await setMessageFields(t.store, failed, { last_error: '550 5.1.1 unknown user', updated_at: at });
    await t.store.messages.appendEvent(deferred, 'deferred', at + 5000, at + 5000, {
      reason: 'connection refused',
      retry_at: 'x',
    });
    await setMessageFields(t.store, deferred, { last_error: 'connection refused', updated_at: at + 5000 });
    // A bounce is the recipient's doing, not the service's: not its last error.
    await t.store.messages.appendEvent(bounced, 'bounced', at + 9000, at + 9000, { reason: '550 mailbox full', hard: true });
    await setMessageFields(t.store, bounced, { last_error: '550 mailbox full', updated_at: at + 9000 });
    for (let i = 0; i < 5; i++) await breakers.failed('acme/outbox', { kind: 'pass' }, 'connection refused');

    const after = await get(t);
    expect(after.services[0]).toEqual({
      id: 'outbox',
      provider: 'outbox',
      default: true,
      breaker: 'open',
      breaker_scope: 'process',
      last_error: { at: '2026-01-01T12:00:05.000Z', message: 'connection refused', message_id: deferred },
    });
    expect(after.services[1]?.last_error).toBeNull();
    t.clock.advance(30_000);
    expect((await get(t)).services[0]?.breaker).toBe('half_open');
  });

  it.skipIf(skip)('days other than 7, 30 or 90 are a 400; an unknown organization a 404', async () => {
    await seed(t);
    for (const days of ['1', '14', 'abc', '']) {
      const res = await admin(t, 'GET', `/organizations/acme/overview?days=${days}`);
      expectError(res, 400, 'invalid_body');
    }
    expectError(await admin(t, 'GET', '/organizations/nobody/overview'), 404, 'not_found');
    expectError(await admin(t, 'GET', '/organizations/acme/overview', undefined, null), 401, 'unauthorized');
  });
});

describe.skipIf(!redisUp)('admin overview with breakers shared on Redis', () => {
  it("reports the shared breaker's state", async () => {
    const redis = new Redis(REDIS_URL);
    const prefix = `test:overview:${Date.now().toString(36)}:`;
    let shared!: RedisBreakers;
    const t = await appWith('sqlite', (clock) => (shared = new RedisBreakers(redis, clock, { prefix })), {
      MAILROOM_REDIS_URL: REDIS_URL,
    });
    try {
      await seed(t);
      for (let i = 0; i < 5; i++) await shared.failed('acme/second', { kind: 'pass' }, 'timeout');
      const o = await get(t);
      expect(o.services.map((s) => [s.id, s.breaker, s.breaker_scope])).toEqual([
        ['outbox', 'closed', 'shared'],
        ['second', 'open', 'shared'],
      ]);
    } finally {
      await redis.del(`${prefix}breaker:acme/second`);
      redis.disconnect();
      await t.cleanup();
    }
  });
});
