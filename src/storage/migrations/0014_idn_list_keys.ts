import { sql, type Kysely } from 'kysely';
import { canonicalAddress } from '../../domain/addresses.js';
import type { Dialect } from '../dialect.js';

/**
 * List entries keyed by the IDN rule (issue 25, src/domain/addresses.ts). Both lists stored an
 * entry lower-cased as typed, so `zoë@exämple.com` added by hand before is a row that the
 * A-label lookups of a send never find. Each such row is rekeyed by canonicalAddress; where the
 * canonical entry exists already, the older spelling goes (the canonical one keeps its own first
 * reason and time). Only rows with a character outside printable ASCII can change (the rule
 * leaves ASCII lower-cased as it was), so the scan reads those alone: none on most deployments.
 */
const LISTS = [
  { table: 'suppressions', column: 'email' },
  { table: 'block_list', column: 'value' },
] as const;

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  for (const { table, column } of LISTS) {
    const col = sql.ref(column);
    const nonAscii = dialect === 'postgres' ? sql`${col} ~ '[^ -~]'` : sql`${col} glob '*[^ -~]*'`;
    const { rows } = await sql<{
      org_id: string;
      entry: string;
    }>`select org_id, ${col} as entry from ${sql.table(table)} where ${nonAscii}`.execute(db);
    for (const { org_id: org, entry } of rows) {
      const key = canonicalAddress(entry);
      if (key === entry) continue;
      const taken = await sql`select 1 from ${sql.table(table)} where org_id = ${org} and ${col} = ${key}`.execute(db);
      if (taken.rows.length > 0)
        await sql`delete from ${sql.table(table)} where org_id = ${org} and ${col} = ${entry}`.execute(db);
      else await sql`update ${sql.table(table)} set ${col} = ${key} where org_id = ${org} and ${col} = ${entry}`.execute(db);
    }
  }
}
