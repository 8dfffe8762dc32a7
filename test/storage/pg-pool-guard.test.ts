import net from 'node:net';
import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { storageTrouble } from '../../src/errors/storage-trouble.js';
import { openDatabase, type OpenedDatabase } from '../../src/storage/dialect.js';
import type { HealthListener } from '../../src/storage/health.js';
import { StorageHealth } from '../../src/storage/health.js';
import { namingPool } from '../../src/storage/prepared-pool.js';
import { waitFor } from '../support/smtp-sink.js';
import { PG_URL, postgresAvailable } from '../support/stores.js';

const pgUp = await postgresAvailable();

/** How the PostgreSQL pool meets a database that goes away (src/storage/dialect.ts, prepared-pool.ts). */
describe.skipIf(!pgUp)('an idle pooled connection the server ends', () => {
  let opened: OpenedDatabase | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await opened?.db.destroy();
    opened = undefined;
  });

  it('changes no health and logs nothing (no outage: an idle timeout, a balancer); the next query works', async () => {
    // The pool's events watched (the idle client's end reaches the pool as an 'error').
    const emit = vi.spyOn(pg.Pool.prototype, 'emit');
    const poolErrors = () => emit.mock.calls.filter(([event]) => event === 'error').length;
    opened = await openDatabase(PG_URL);
    const events: Array<Parameters<HealthListener>[0]> = [];
    opened.health.listen((e) => events.push(e));
    const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(opened.db)).rows[0]?.pid;
    // The connection is idle in the pool now; a second client ends its backend (57P01 to it).
    const other = new pg.Client({ connectionString: PG_URL });
    await other.connect();
    try {
      await other.query('select pg_terminate_backend($1)', [pid]);
    } finally {
      await other.end();
    }
    // The pool has heard of it (57P01 on the idle client): whatever it does about it is done.
    await waitFor(() => poolErrors() === 1, 5_000, "the idle client's error to reach the pool");
    expect(events).toEqual([]);
    expect(opened.health.current()).toBeUndefined();
    const next = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(opened.db)).rows[0]?.pid;
    expect(next).not.toBe(pid);
    expect(events).toEqual([]);
  });
});

describe('the connect cool-down while the database is away', () => {
  let server: net.Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
    server = undefined;
  });

  it('concurrent checkouts within the cool-down make no attempt; after it, one attempt for all of them', async () => {
    // Accepts and closes at once: pg's connect fails ("Connection terminated unexpectedly"), and
    // every attempt is counted.
    let attempts = 0;
    server = net.createServer((socket) => {
      attempts++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const health = new StorageHealth();
    const pgPool = new pg.Pool({
      connectionString: `postgres://postgres@127.0.0.1:${port}/test`,
      max: 10,
      connectionTimeoutMillis: 2000,
    });
    const pool = namingPool(pgPool, undefined, { health });
    const failures = async (n: number) =>
      Promise.all(
        Array.from({ length: n }, () =>
          pool.connect().then(
            () => 'connected',
            (e: unknown) => storageTrouble(e),
          ),
        ),
      );
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      expect(await failures(1)).toEqual(['database_unavailable']);
      // Within the first cool-down (100 ms): all fail at once, as the database being away.
      // Every attempt a checkout makes has reached the server before the checkout fails.
      expect(await failures(8)).toEqual(Array(8).fill('database_unavailable'));
      expect(attempts).toBe(1);
      expect(health.current()?.kind).toBe('database_unavailable');
      // After it (the cool-down reads Date.now(), moved here): one attempt goes through; the
      // others wait for it and fail with it.
      vi.setSystemTime(Date.now() + 150);
      expect(await failures(8)).toEqual(Array(8).fill('database_unavailable'));
      expect(attempts).toBe(2);
    } finally {
      vi.useRealTimers();
      await pool.end();
    }
  });
});
