import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { buildTestApp, testConfig } from '../support/app.js';
import { closerPerTest } from '../support/cleanup.js';
import { startPrivateCluster, privateClusterPossible } from '../support/private-pg.js';
import { PRIVATE_KEY, seedOrg } from '../support/seed.js';
import { openTestStore } from '../support/stores.js';
import { ManualClock } from '../../src/domain/clock.js';

/**
 * Issue 25 §3 on PostgreSQL: a real `53100 disk_full`. mailroom's tables live in a tablespace
 * on an 8 MiB tmpfs of a PRIVATE cluster (never the shared server), filled by a ballast file.
 * The WAL and the catalog stay on the ordinary disk: a full WAL disk makes PostgreSQL itself
 * stop (PANIC), which is a restart, not this drill.
 */
const canMount = (): boolean => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-mnt-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'pipe' });
    execFileSync('umount', [dir]);
    return true;
  } catch {
    return false;
  } finally {
    fs.rmdirSync(dir);
  }
};
const possible = canMount() && privateClusterPossible();
if (!possible) console.warn('\n*** PostgreSQL full-disk drill SKIPPED: needs root (mount) and a private cluster ***\n');

describe('PostgreSQL on a full disk', () => {
  const closer = closerPerTest();
  it.skipIf(!possible)(
    'answers 503 storage_full (53100) while the tablespace is full, and accepts again once there is room',
    { timeout: 120_000 },
    async () => {
      const cluster = await startPrivateCluster();
      closer.defer(() => cluster.destroy());
      const mount = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-pgfull-'));
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m,mode=0700', 'tmpfs', mount]);
      closer.defer(() => {
        execFileSync('umount', ['-l', mount]);
        fs.rmdirSync(mount);
      });
      execFileSync('chown', ['postgres:postgres', mount]);
      const admin = new pg.Client({ connectionString: cluster.url });
      await admin.connect();
      try {
        await admin.query(`create tablespace tiny location '${mount}'`);
        await admin.query('alter database postgres set default_tablespace = tiny');
      } finally {
        await admin.end();
      }

      const clock = new ManualClock();
      const store = await openTestStore(`${cluster.url}?schema=full`, clock);
      closer.defer(() => store.close());
      await seedOrg(store, { plan: 'business_50k', credits: 1_000_000 });
      const app = await buildTestApp(testConfig(), { store, clock });
      closer.defer(() => app.close());
      const send = async (i: number) => {
        // Each send in its own rate-limit second of the app's clock (no real time passes).
        clock.advance(1000);
        return app.inject({
          method: 'POST',
          url: '/v1/send',
          headers: { authorization: `Bearer ${PRIVATE_KEY}` },
          payload: {
            template_id: 'contact',
            template_params: { name: `Ada ${i}`, email: 'ada@example.org', message: 'x'.repeat(2_000) },
          },
        });
      };
      for (let i = 0; i < 5; i++) expect((await send(i)).statusCode).toBe(202);

      const ballast = path.join(mount, 'ballast');
      const fd = fs.openSync(ballast, 'w');
      try {
        for (;;) fs.writeSync(fd, Buffer.alloc(64 * 1024, 1));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      } finally {
        fs.closeSync(fd);
      }
      // The tables' last pages still take a few rows; then the next page cannot be had.
      let refused: Awaited<ReturnType<typeof send>> | undefined;
      for (let i = 0; i < 3_000 && refused === undefined; i++) {
        const res = await send(100 + i);
        if (res.statusCode !== 202) refused = res;
      }
      expect(refused, 'no send refused on a full tablespace').toBeDefined();
      expect(refused?.statusCode, refused?.body).toBe(503);
      expect(refused?.headers['retry-after']).toBeDefined();
      expect(refused?.json()).toMatchObject({ error: { code: 'service_unavailable', details: { reason: 'storage_full' } } });

      fs.rmSync(ballast);
      for (let i = 0; i < 10; i++) {
        const res = await send(10_000 + i);
        expect(res.statusCode, res.body).toBe(202);
      }
    },
  );
});
