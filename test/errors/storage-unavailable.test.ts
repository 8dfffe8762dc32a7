import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import Fastify from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { installErrorHandling } from '../../src/errors/handler.js';
import { StorageHealth } from '../../src/storage/health.js';
import { namingPool } from '../../src/storage/prepared-pool.js';
import { freshApp, type TestApp } from '../support/app.js';
import { databaseOf } from '../support/db.js';
import { bearer, expectAccepted, expectError } from '../support/http.js';
import { seedOrg } from '../support/seed.js';
import { post, sendBody } from '../support/send.js';
import { freePort } from '../support/smtp-sink.js';
import { PG_URL } from '../support/stores.js';
import { describeDialects } from '../support/dialects.js';

/** Real errors of each dialect, as the database reports them (no hand-made error objects). */
const realErrors: Record<'sqlite' | 'postgres', Array<{ name: string; reason: string; cause: () => Promise<unknown> }>> = {
  sqlite: [
    {
      name: 'SQLITE_FULL (a database at its max_page_count)',
      reason: 'storage_full',
      cause: async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-full-'));
        const db = new SqliteDatabase(path.join(dir, 'full.db'));
        try {
          db.exec('create table t (v text)');
          db.pragma(`max_page_count = ${Number(db.pragma('page_count', { simple: true }))}`);
          db.prepare('insert into t values (?)').run('x'.repeat(100_000));
        } catch (err) {
          return err;
        } finally {
          db.close();
          fs.rmSync(dir, { recursive: true, force: true });
        }
        throw new Error('the insert did not fail');
      },
    },
  ],
  postgres: [
    {
      name: '57P01 (the server terminated the session, as pg_ctl restart -m fast does)',
      reason: 'database_unavailable',
      cause: async () => {
        const client = new pg.Client({ connectionString: PG_URL });
        client.on('error', () => undefined);
        await client.connect();
        const err = await client.query('select pg_terminate_backend(pg_backend_pid())').then(
          () => undefined,
          (e: unknown) => e,
        );
        await client.end().catch(() => undefined);
        return err;
      },
    },
    {
      name: 'ECONNREFUSED (nothing listens: the server is down)',
      reason: 'database_unavailable',
      cause: async () => {
        // Through the pool, which marks its errors as the database's (storage-trouble.ts fromDatabase).
        const pool = namingPool(
          new pg.Pool({
            connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/test`,
            connectionTimeoutMillis: 2000,
          }),
        );
        const err = await pool.connect().then(
          () => undefined,
          (e: unknown) => e,
        );
        await pool.end();
        return err;
      },
    },
  ],
};

describeDialects('the error handler answers storage trouble with 503 service_unavailable on %s', (dialect, skip) => {
  for (const { name, reason, cause } of realErrors[dialect]) {
    it.skipIf(skip)(`${name}: 503, Retry-After, details.reason ${reason}; recorded in the health state`, async () => {
      const error = await cause();
      expect(error).toBeInstanceOf(Error);
      const app = Fastify();
      const health = new StorageHealth();
      installErrorHandling(app, 'https://docs.test', [], health);
      app.get('/boom', async () => {
        throw error;
      });
      const res = await app.inject({ method: 'GET', url: '/boom' });
      await app.close();
      const body = expectError(res, 503, 'service_unavailable');
      expect(body.details?.reason).toBe(reason);
      expect(Number(res.headers['retry-after'])).toBe(reason === 'storage_full' ? 30 : 5);
      expect(health.current()?.kind).toBe(reason);
    });
  }
});

/** The real send path on SQLite with its file at its size limit: what a full disk does to it. */
describe('a full SQLite database on the send path', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  it('sends answer 503 storage_full, /v1/health is 200 degraded; once writes work, both recover', async () => {
    t = await freshApp('sqlite');
    await seedOrg(t.store);
    const db = databaseOf(t.store);
    const pages = Number((await sql<{ page_count: number }>`pragma page_count`.execute(db)).rows[0]?.page_count);
    await sql.raw(`pragma max_page_count = ${pages}`).execute(db);
    // Enough text that the rows need pages the file may not grow by.
    const big = sendBody({ template_params: { name: 'Ada', email: 'ada@example.org', message: 'x'.repeat(50_000) } });
    const full = await post(t, big, bearer());
    const err = expectError(full, 503, 'service_unavailable');
    expect(err.details?.reason).toBe('storage_full');
    expect(full.headers['retry-after']).toBe('30');

    const degraded = await t.app.inject({ method: 'GET', url: '/v1/health' });
    expect(degraded.statusCode).toBe(200);
    expect(degraded.json()).toMatchObject({ status: 'degraded', database: 'ok', storage: 'full' });
    expect(typeof degraded.json<{ storage_full_since: string }>().storage_full_since).toBe('string');

    await sql.raw(`pragma max_page_count = ${pages * 100}`).execute(db);
    expectAccepted(await post(t, big, bearer()));
    const ok = await t.app.inject({ method: 'GET', url: '/v1/health' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ status: 'ok', storage: 'ok' });
  });
});
