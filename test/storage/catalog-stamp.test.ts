import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import { openDatabase } from '../../src/storage/dialect.js';
import type { Store } from '../../src/storage/store.js';
import { Closer } from '../support/cleanup.js';
import { CONTACT_TEMPLATE, PRIVATE_KEY, seedOrg } from '../support/seed.js';
import { migratedDatabase, openTestStore } from '../support/stores.js';
import { describeDialects } from '../support/dialects.js';

// Past the cache's 1 ms window, so the next read checks the stamp (not a timing assertion). The
// window is read from performance.now() inside the store, which no test clock reaches: a real 5 ms.
const pastWindow = () => new Promise((r) => setTimeout(r, 5));

describeDialects('the cached catalog and its stamp on %s', (dialect, skip) => {
  let closer: Closer;
  let a: Store;
  let b: Store;
  // A third connection for SQL typed by hand, as an operator at a psql or sqlite3 prompt.
  let byHand: Awaited<ReturnType<typeof openDatabase>>['db'];
  beforeEach(async () => {
    closer = new Closer();
    if (skip) return;
    const db = await migratedDatabase(dialect);
    closer.defer(() => db.drop());
    // Two processes over one database: `a` serves sends, `b` is the CLI or another API process.
    a = await openTestStore(db.url, systemClock);
    closer.defer(() => a.close());
    b = await openTestStore(db.url, systemClock);
    closer.defer(() => b.close());
    const opened = await openDatabase(db.url);
    byHand = opened.db;
    closer.defer(async () => {
      await opened.file?.close();
      await opened.db.destroy();
    });
    await seedOrg(a);
  });
  afterEach(async () => {
    await closer.closeAll();
  });

  const stamp = async () =>
    Number((await sql<{ stamp: number | string }>`select stamp from catalog_stamp where id = 1`.execute(byHand)).rows[0]?.stamp);

  it.skipIf(skip)('a key revoked by another process is refused at the next read, not a second later', async () => {
    const key = await a.catalog.keyByValue(PRIVATE_KEY);
    expect(key?.status).toBe('active');
    await b.keys.setStatus(key?.id ?? '', 'revoked', Date.now());
    await pastWindow();
    expect((await a.catalog.keyByValue(PRIVATE_KEY))?.status).toBe('revoked');
  });

  it.skipIf(skip)(
    'a template or settings change elsewhere is read again; an unchanged catalog is served from memory',
    async () => {
      const org = await a.catalog.organization('acme');
      const template = await a.catalog.template('acme', CONTACT_TEMPLATE.id);
      expect(template?.subject).toBe(CONTACT_TEMPLATE.subject);
      await pastWindow();
      // Unchanged: the very same objects come back (no reread).
      expect(await a.catalog.organization('acme')).toBe(org);
      await b.organizations.update('acme', { plan: 'business_200k' }, Date.now());
      await pastWindow();
      expect((await a.catalog.organization('acme'))?.plan).toBe('business_200k');
      // A change made by hand in SQL moves the stamp too (the triggers, not the store, bump it).
      await sql`update templates set subject = 'Changed by hand' where org_id = 'acme' and id = ${CONTACT_TEMPLATE.id}`.execute(
        byHand,
      );
      await pastWindow();
      expect((await a.catalog.template('acme', CONTACT_TEMPLATE.id))?.subject).toBe('Changed by hand');
    },
  );

  it.skipIf(skip)('credits taken by sends do not move the stamp; catalog writes do', async () => {
    const before = await stamp();
    await sql`update organizations set credits = credits - 1, updated_at = ${Date.now()} where id = 'acme'`.execute(byHand);
    expect(await stamp()).toBe(before);
    await sql`update organizations set suspended = 1 where id = 'acme'`.execute(byHand);
    expect(await stamp()).toBeGreaterThan(before);
  });
});
