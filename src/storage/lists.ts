import { CompiledQuery, sql, type Kysely } from 'kysely';
import { asciiDomain, canonicalAddress } from '../domain/addresses.js';
import type { Suppression } from '../domain/types.js';
import type { Dialect } from './dialect.js';
import type { Database } from './schema.js';

/**
 * IN-list lookups in slices: nothing caps the recipients of a message (256 kB of parameters can
 * render ~25,000 addresses) and the worker asks for a whole batch at once, while PostgreSQL takes
 * at most 65,535 parameters per statement (SQLite 32,766). Almost every call is one slice.
 */
const IN_CHUNK = 1000;

async function inChunks(values: readonly string[], find: (chunk: string[]) => Promise<string[]>): Promise<string[]> {
  const found: string[] = [];
  for (let i = 0; i < values.length; i += IN_CHUNK) found.push(...(await find(values.slice(i, i + IN_CHUNK))));
  return found;
}

/**
 * Entries are stored and compared by canonicalAddress (src/domain/addresses.ts): lower-cased,
 * an IDN domain as its A-label, so `zoë@exämple.com` and `zoë@xn--exmple-cua.com` are one entry.
 */
export const normalizeAddress = canonicalAddress;

/**
 * One page of a list, in order of the stored value: `q` a case-insensitive substring of it,
 * `after` the last value of the previous page (keyset: entries added or removed meanwhile
 * never shift a page), `limit` undefined for the whole list.
 */
export interface ListPage {
  q?: string | undefined;
  after?: string | undefined;
  limit?: number | undefined;
}

/** A suppression as the admin API lists it: with the message whose bounce or complaint caused it. */
export interface SuppressionEntry extends Suppression {
  message_id: string | null;
}

/**
 * `value` contains `q`, case-insensitively: both lists store values by normalizeAddress, so `q`
 * is keyed so too and the match is the same on SQLite (LIKE ignores ASCII case) and PostgreSQL
 * (LIKE does not). `%`, `_` and `\` in `q` match themselves.
 */
function containing(column: 'email' | 'value', q: string) {
  const like = (text: string) =>
    sql<boolean>`${sql.ref(column)} like ${`%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`} escape ${sql.lit('\\')}`;
  const key = normalizeAddress(q);
  // A whole IDN domain typed as the UI shows it (`exämple.com`) finds its stored A-label too.
  const domain = key.includes('@') ? undefined : asciiDomain(key);
  return domain === undefined || domain === key ? like(key) : sql<boolean>`(${like(key)} or ${like(domain)})`;
}

export function suppressionsRepo(db: Kysely<Database>) {
  return {
    async list(orgId: string): Promise<Suppression[]> {
      return db
        .selectFrom('suppressions')
        .select(['email', 'reason', 'created_at'])
        .where('org_id', '=', orgId)
        .orderBy('email')
        .execute();
    },

    /** A page of the list by address (the primary key's order), with each entry's message. */
    async page(orgId: string, page: ListPage): Promise<SuppressionEntry[]> {
      let q = db.selectFrom('suppressions').select(['email', 'reason', 'created_at', 'message_id']).where('org_id', '=', orgId);
      if (page.q !== undefined && page.q.trim() !== '') q = q.where(containing('email', page.q));
      if (page.after !== undefined) q = q.where('email', '>', page.after);
      q = q.orderBy('email');
      return (page.limit === undefined ? q : q.limit(page.limit)).execute();
    },

    /**
     * Returns whether the entry was new; an existing entry keeps its first reason and time.
     * `messageId`: the message whose bounce or complaint caused it, when one did.
     */
    async add(orgId: string, email: string, reason: string, now: number, messageId: string | null = null): Promise<boolean> {
      const r = await db
        .insertInto('suppressions')
        .values({ org_id: orgId, email: normalizeAddress(email), reason, created_at: now, message_id: messageId })
        .onConflict((oc) => oc.columns(['org_id', 'email']).doNothing())
        .executeTakeFirst();
      return (r.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },

    /**
     * Adds entries already in canonical form (a CSV import's batch) in one statement; existing
     * entries keep their first reason and time. Returns how many were new. Callers keep a batch
     * to a few hundred rows: 4 parameters a row under SQLite's 32,766 per statement.
     */
    async addMany(orgId: string, entries: ReadonlyArray<{ email: string; reason: string }>, now: number): Promise<number> {
      if (entries.length === 0) return 0;
      const r = await db
        .insertInto('suppressions')
        .values(entries.map((e) => ({ org_id: orgId, email: e.email, reason: e.reason, created_at: now, message_id: null })))
        .onConflict((oc) => oc.columns(['org_id', 'email']).doNothing())
        .executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0n);
    },

    async remove(orgId: string, email: string): Promise<boolean> {
      const r = await db
        .deleteFrom('suppressions')
        .where('org_id', '=', orgId)
        .where('email', '=', normalizeAddress(email))
        .executeTakeFirst();
      return r.numDeletedRows > 0n;
    },

    /** Which of these addresses are suppressed (one indexed query per send). */
    async findAmong(orgId: string, emails: readonly string[]): Promise<string[]> {
      return inChunks(emails.map(normalizeAddress), async (chunk) =>
        (
          await db.selectFrom('suppressions').select('email').where('org_id', '=', orgId).where('email', 'in', chunk).execute()
        ).map((r) => r.email),
      );
    },

    /** One entry, as stored (its first reason and time), or undefined. */
    async get(orgId: string, email: string): Promise<Suppression | undefined> {
      return db
        .selectFrom('suppressions')
        .select(['email', 'reason', 'created_at'])
        .where('org_id', '=', orgId)
        .where('email', '=', normalizeAddress(email))
        .executeTakeFirst();
    },
  };
}

export function blockListRepo(db: Kysely<Database>) {
  return {
    async list(orgId: string): Promise<string[]> {
      const rows = await db.selectFrom('block_list').select('value').where('org_id', '=', orgId).orderBy('value').execute();
      return rows.map((r) => r.value);
    },

    /** A page of the list in value order. */
    async page(orgId: string, page: ListPage): Promise<string[]> {
      let q = db.selectFrom('block_list').select('value').where('org_id', '=', orgId);
      if (page.q !== undefined && page.q.trim() !== '') q = q.where(containing('value', page.q));
      if (page.after !== undefined) q = q.where('value', '>', page.after);
      q = q.orderBy('value');
      return (await (page.limit === undefined ? q : q.limit(page.limit)).execute()).map((r) => r.value);
    },

    async add(orgId: string, value: string, now: number): Promise<boolean> {
      const r = await db
        .insertInto('block_list')
        .values({ org_id: orgId, value: normalizeAddress(value), created_at: now })
        .onConflict((oc) => oc.columns(['org_id', 'value']).doNothing())
        .executeTakeFirst();
      return (r.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },

    async remove(orgId: string, value: string): Promise<boolean> {
      const r = await db
        .deleteFrom('block_list')
        .where('org_id', '=', orgId)
        .where('value', '=', normalizeAddress(value))
        .executeTakeFirst();
      return r.numDeletedRows > 0n;
    },

    async findAmong(orgId: string, values: readonly string[]): Promise<string[]> {
      return inChunks(values.map(normalizeAddress), async (chunk) =>
        (await db.selectFrom('block_list').select('value').where('org_id', '=', orgId).where('value', 'in', chunk).execute()).map(
          (r) => r.value,
        ),
      );
    },
  };
}

/** What a send finds of its recipients on the two lists. */
export interface ListHits {
  blocked: string[];
  suppressed: string[];
}

/**
 * The send path's one look at both lists: a single statement (UNION ALL over the two primary
 * keys) instead of one query per list, its text built once per shape (how many values of each)
 * and per dialect. A send has one recipient, so two block-list values and one address: building
 * two queries with the query builder cost ~40 µs of a send's CPU, more than SQLite's two lookups.
 * Longer lists go in slices, as `findAmong` does.
 */
export function listHitsRepo(db: Kysely<Database>, dialect: Dialect) {
  const texts = new Map<string, string>();
  const text = (blockCount: number, suppressCount: number): string => {
    const shape = `${blockCount}:${suppressCount}`;
    let t = texts.get(shape);
    if (t === undefined) {
      let n = 0;
      const mark = () => (dialect === 'postgres' ? `$${++n}` : '?');
      const marks = (count: number) => Array.from({ length: count }, mark).join(', ');
      const parts: string[] = [];
      if (blockCount > 0)
        parts.push(`select 'b' as list, value from block_list where org_id = ${mark()} and value in (${marks(blockCount)})`);
      if (suppressCount > 0)
        parts.push(
          `select 's' as list, email as value from suppressions where org_id = ${mark()} and email in (${marks(suppressCount)})`,
        );
      t = parts.join(' union all ');
      // Shapes are few (a message's recipient count); keep the map from growing without end.
      if (texts.size < 256) texts.set(shape, t);
    }
    return t;
  };
  return {
    async among(orgId: string, blockValues: readonly string[], addresses: readonly string[]): Promise<ListHits> {
      const hits: ListHits = { blocked: [], suppressed: [] };
      const block = blockValues.map(normalizeAddress);
      const suppress = addresses.map(normalizeAddress);
      for (let i = 0; i < Math.max(block.length, suppress.length); i += IN_CHUNK) {
        const b = block.slice(i, i + IN_CHUNK);
        const s = suppress.slice(i, i + IN_CHUNK);
        const params: string[] = [];
        if (b.length > 0) params.push(orgId, ...b);
        if (s.length > 0) params.push(orgId, ...s);
        const { rows } = await db.executeQuery(
          CompiledQuery.raw(text(b.length, s.length), params) as CompiledQuery<{ list: string; value: string }>,
        );
        for (const r of rows) (r.list === 'b' ? hits.blocked : hits.suppressed).push(r.value);
      }
      return hits;
    },
  };
}
