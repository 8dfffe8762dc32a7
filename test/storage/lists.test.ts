import { expect, it } from 'vitest';
import { seedOrg } from '../support/seed.js';
import { describeDialects, freshStoreEach } from '../support/dialects.js';

describeDialects('suppression and block-list lookups on %s', (dialect, skip) => {
  const t = freshStoreEach(dialect, skip);

  it.skipIf(skip)(
    "70,000 addresses at once (a worker batch of huge messages): found, where one IN list is past both databases' parameter " +
      'limits',
    async () => {
      await seedOrg(t.store);
      const addresses = Array.from({ length: 70_000 }, (_, i) => `r${i}@example.org`);
      await t.store.suppressions.add('acme', 'R5@example.org', 'hard_bounce', 0);
      await t.store.suppressions.add('acme', 'r69999@example.org', 'hard_bounce', 0);
      await t.store.blockList.add('acme', 'r40000@example.org', 0);
      expect((await t.store.suppressions.findAmong('acme', addresses)).sort()).toEqual(['r5@example.org', 'r69999@example.org']);
      expect(await t.store.blockList.findAmong('acme', addresses)).toEqual(['r40000@example.org']);
      expect(await t.store.suppressions.findAmong('acme', [])).toEqual([]);
    },
  );
});
