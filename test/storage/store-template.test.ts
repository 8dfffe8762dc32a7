import { sql, type Kysely, type RawBuilder } from 'kysely';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { migrate, openDatabase, type Dialect, type OpenedDatabase } from '../../src/storage/dialect.js';
import { MIGRATIONS } from '../../src/storage/migrations/index.js';
import type { Database } from '../../src/storage/schema.js';
import { DIALECTS, freshDatabase, migratedDatabase, postgresAvailable, type TestDatabase } from '../support/stores.js';

/**
 * Fresh stores start from the run's template (test/support/store-templates.ts) instead of
 * migrating: a templated database must be what migrating an empty one makes, down to indexes,
 * triggers, constraints, functions, planner statistics and the migrations' own rows.
 */
const pgUp = await postgresAvailable();
const templates = inject('storeTemplates');

describe.each(DIALECTS)('store template on %s', (dialect) => {
  const templated = dialect === 'sqlite' ? templates.sqliteFile !== undefined : templates.postgresScript !== undefined;
  const skip = (dialect === 'postgres' && !pgUp) || !templated;
  const opened: OpenedDatabase[] = [];
  const made: TestDatabase[] = [];
  afterEach(async () => {
    for (const o of opened.splice(0)) {
      await o.file?.close();
      await o.db.destroy();
    }
    for (const d of made.splice(0)) await d.drop();
  });
  const open = async (database: TestDatabase): Promise<OpenedDatabase> => {
    made.push(database);
    const o = await openDatabase(database.url);
    opened.push(o);
    return o;
  };

  it.skipIf(skip)('holds every migration before anything migrates it', async () => {
    const { db } = await open(await migratedDatabase(dialect));
    const rows = await sql<{ name: string }>`select name from mailroom_migrations order by name`.execute(db);
    expect(rows.rows.map((r) => r.name)).toEqual(Object.keys(MIGRATIONS).sort());
  });

  it.skipIf(skip)('is the schema that migrating an empty database makes', async () => {
    const copy = await open(await migratedDatabase(dialect));
    const migrated = await open(await freshDatabase(dialect));
    expect(await migrate(migrated)).toEqual(Object.keys(MIGRATIONS).sort());
    expect(await migrate(copy)).toEqual([]);
    const [a, b] = await Promise.all([describeSchema(copy.db, dialect), describeSchema(migrated.db, dialect)]);
    expect(a.length).toBeGreaterThan(100);
    expect(a).toEqual(b);
  });
});

/** Every object and seeded row, as lines with the schema's own name written as `S`. */
async function describeSchema(db: Kysely<Database>, dialect: Dialect): Promise<string[]> {
  const lines = async (query: RawBuilder<unknown>): Promise<string[]> =>
    (await query.execute(db)).rows.map((row) => JSON.stringify(row));
  const seeded = [
    ...(await lines(sql`select name from mailroom_migrations order by name`)),
    ...(await lines(sql`select * from catalog_stamp order by id`)),
  ];
  if (dialect === 'sqlite') {
    return [
      ...(await lines(sql`select type, name, tbl_name, sql from sqlite_master order by type, name`)),
      ...(await lines(sql`select tbl, idx, stat from sqlite_stat1 order by tbl, idx`)),
      ...(await lines(sql`select * from pragma_journal_mode`)),
      ...seeded,
    ];
  }
  const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s ?? '';
  const here = sql`(select oid from pg_namespace where nspname = current_schema())`;
  const catalog = [
    ...(await lines(sql`select relname, relkind, reloptions from pg_class where relnamespace = ${here} order by relname`)),
    ...(await lines(sql`select table_name, column_name, data_type, is_nullable, column_default from information_schema.columns
      where table_schema = current_schema() order by table_name, ordinal_position`)),
    ...(await lines(sql`select indexname, indexdef from pg_indexes where schemaname = current_schema() order by indexname`)),
    ...(await lines(
      sql`select conname, pg_get_constraintdef(oid) as def from pg_constraint where connamespace = ${here} order by conname`,
    )),
    ...(await lines(sql`select tgname, pg_get_triggerdef(t.oid) as def from pg_trigger t
      join pg_class c on c.oid = t.tgrelid where c.relnamespace = ${here} and not tgisinternal order by tgname`)),
    ...(await lines(sql`select proname, prosrc from pg_proc where pronamespace = ${here} order by proname`)),
  ];
  return [...catalog.map((line) => line.split(schema).join('S')), ...seeded];
}
