import { sql, type Kysely } from 'kysely';
import type { Suppression } from '../domain/types.js';
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

/** Addresses compare case-insensitively; both lists store them lower-cased. */
export const normalizeAddress = (email: string): string => email.trim().toLowerCase();

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
 * `value` contains `q`, case-insensitively: both lists store values lower-cased, so `q` is
 * lower-cased too and the match is the same on SQLite (LIKE ignores ASCII case) and PostgreSQL
 * (LIKE does not). `%`, `_` and `\` in `q` match themselves.
 */
function containing(column: 'email' | 'value', q: string) {
  const pattern = `%${normalizeAddress(q).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql<boolean>`${sql.ref(column)} like ${pattern} escape ${sql.lit('\\')}`;
}

export function suppressionsRepo(db: Kysely<Database>) {
  return {
    async list(orgId: string): Promise<Suppression[]> {
      return db.selectFrom('suppressions').select(['email', 'reason', 'created_at'])
        .where('org_id', '=', orgId).orderBy('email').execute();
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
      const r = await db.insertInto('suppressions')
        .values({ org_id: orgId, email: normalizeAddress(email), reason, created_at: now, message_id: messageId })
        .onConflict((oc) => oc.columns(['org_id', 'email']).doNothing())
        .executeTakeFirst();
      return (r.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },

    async remove(orgId: string, email: string): Promise<boolean> {
      const r = await db.deleteFrom('suppressions')
        .where('org_id', '=', orgId).where('email', '=', normalizeAddress(email)).executeTakeFirst();
      return r.numDeletedRows > 0n;
    },

    /** Which of these addresses are suppressed (one indexed query per send). */
    async findAmong(orgId: string, emails: readonly string[]): Promise<string[]> {
      return inChunks(emails.map(normalizeAddress), async (chunk) => (await db.selectFrom('suppressions').select('email')
        .where('org_id', '=', orgId).where('email', 'in', chunk).execute()).map((r) => r.email));
    },

    /** One entry, as stored (its first reason and time), or undefined. */
    async get(orgId: string, email: string): Promise<Suppression | undefined> {
      return db.selectFrom('suppressions').select(['email', 'reason', 'created_at'])
        .where('org_id', '=', orgId).where('email', '=', normalizeAddress(email)).executeTakeFirst();
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
      const r = await db.insertInto('block_list')
        .values({ org_id: orgId, value: normalizeAddress(value), created_at: now })
        .onConflict((oc) => oc.columns(['org_id', 'value']).doNothing())
        .executeTakeFirst();
      return (r.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },

    async remove(orgId: string, value: string): Promise<boolean> {
      const r = await db.deleteFrom('block_list')
        .where('org_id', '=', orgId).where('value', '=', normalizeAddress(value)).executeTakeFirst();
      return r.numDeletedRows > 0n;
    },

    async findAmong(orgId: string, values: readonly string[]): Promise<string[]> {
      return inChunks(values.map(normalizeAddress), async (chunk) => (await db.selectFrom('block_list').select('value')
        .where('org_id', '=', orgId).where('value', 'in', chunk).execute()).map((r) => r.value));
    },
  };
}
