import { expect, it } from 'vitest';
import { seedOrg } from '../support/seed.js';
import { describeDialects, freshStoreEach } from '../support/dialects.js';

/** The send path's one statement over both lists (storage/lists.ts listHitsRepo). */
describeDialects('both lists in one look on %s', (dialect, skip) => {
  const t = freshStoreEach(dialect, skip);

  it.skipIf(skip)(
    'finds block-list values and suppressed addresses apart, case-insensitively, only of the organization asked',
    async () => {
      await seedOrg(t.store);
      await t.store.blockList.add('acme', '@blocked.example', 0);
      await t.store.suppressions.add('acme', 'gone@example.org', 'hard_bounce', 0);
      const hits = await t.store.listHits.among(
        'acme',
        ['Gone@Example.org', '@example.org', '@BLOCKED.example'],
        ['GONE@example.org', 'ok@example.org'],
      );
      expect(hits).toEqual({ blocked: ['@blocked.example'], suppressed: ['gone@example.org'] });
      expect(await t.store.listHits.among('other', ['@blocked.example'], ['gone@example.org'])).toEqual({
        blocked: [],
        suppressed: [],
      });
      expect(await t.store.listHits.among('acme', [], ['gone@example.org'])).toEqual({
        blocked: [],
        suppressed: ['gone@example.org'],
      });
      expect(await t.store.listHits.among('acme', ['@blocked.example'], [])).toEqual({
        blocked: ['@blocked.example'],
        suppressed: [],
      });
      expect(await t.store.listHits.among('acme', [], [])).toEqual({ blocked: [], suppressed: [] });
    },
  );

  it.skipIf(skip)('2,500 addresses (past one slice of 1,000): every hit found', async () => {
    await seedOrg(t.store);
    const addresses = Array.from({ length: 2500 }, (_, i) => `r${i}@example.org`);
    await t.store.suppressions.add('acme', 'r2499@example.org', 'hard_bounce', 0);
    await t.store.blockList.add('acme', 'r1500@example.org', 0);
    const hits = await t.store.listHits.among('acme', addresses, addresses.slice(0, 2500));
    expect(hits).toEqual({ blocked: ['r1500@example.org'], suppressed: ['r2499@example.org'] });
  });
});
