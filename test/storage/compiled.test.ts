import { expect, it } from 'vitest';
import { compiledOnce } from '../../src/storage/compiled.js';
import { databaseOf } from '../support/db.js';
import { seedOrg } from '../support/seed.js';
import { describeDialects, freshStoreEach } from '../support/dialects.js';

// One statement object serves every store of both dialects: the SQL is compiled per dialect.
const creditsOf = compiledOnce<{ id: string; floor: number }>((db, p) =>
  db
    .selectFrom('organizations')
    .select(['id', 'credits'])
    .where('id', '=', p('id'))
    .where('credits', '>=', p('floor'))
    .where('suspended', '=', 0),
);

describeDialects('statements compiled once, on %s', (dialect, skip) => {
  const t = freshStoreEach(dialect, skip);

  it.skipIf(skip)("binds each call's values and keeps the builder's constants", async () => {
    await seedOrg(t.store, { id: 'org_a', credits: 7 });
    await seedOrg(t.store, { id: 'org_b', credits: 3, keys: [] });
    const rows = async (id: string, floor: number) => (await creditsOf(databaseOf(t.store), dialect, { id, floor })).rows;
    expect(await rows('org_a', 5)).toEqual([{ id: 'org_a', credits: 7 }]);
    expect(await rows('org_b', 5)).toEqual([]);
    expect(await rows('org_b', 3)).toEqual([{ id: 'org_b', credits: 3 }]);
    await t.store.organizations.update('org_b', { suspended: true }, t.clock.now());
    expect(await rows('org_b', 0)).toEqual([]);
  });
});
