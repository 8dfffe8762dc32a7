import type { Kysely, Selectable } from 'kysely';
import { compiledOnce } from './compiled.js';
import { CONNECT_TIMEOUT_MS, STATEMENT_TIMEOUT_MS, type Dialect } from './dialect.js';
import type { Database, IdempotencyTable } from './schema.js';

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type IdempotencyClaim =
  /** `at`: the claim's time (PostgreSQL's claim row), which fences its complete and release. */
  | { kind: 'claimed'; at?: number }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'conflict'; reason: 'different_body' | 'in_progress' };

/** Spec, Idempotency: keys are remembered for 24 hours. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * A claim whose request never finished (its process died between claim and reply, or it lost
 * the database and could not remove its claim) is taken over after this long; until then a
 * retry with the key is 409 `in_progress`. 20 s: what a request can take on the database, its
 * wait for a connection (CONNECT_TIMEOUT_MS, 5 s) and a statement (STATEMENT_TIMEOUT_MS, 15 s;
 * a send's statements take milliseconds). Was 60 s. A request slower still is fenced, not
 * duplicated: its claim's time no longer matches at its commit (complete), so its transaction
 * rolls back with 409 and the retry that took over is the one that counts.
 */
export const IN_FLIGHT_LEASE_MS = CONNECT_TIMEOUT_MS + STATEMENT_TIMEOUT_MS;

const putRecord = compiledOnce<{
  org_id: string;
  key: string;
  request_hash: string;
  response_status: number;
  response_headers: string;
  response_body: string;
  created_at: number;
  expires_at: number;
}>((db, p) => {
  const values = {
    request_hash: p('request_hash'),
    state: 'done',
    response_status: p('response_status'),
    response_headers: p('response_headers'),
    response_body: p('response_body'),
    created_at: p('created_at'),
    expires_at: p('expires_at'),
  };
  return db
    .insertInto('idempotency_records')
    .values({ org_id: p('org_id'), key: p('key'), ...values })
    .onConflict((oc) => oc.columns(['org_id', 'key']).doUpdateSet(values));
});

/** Read on every send that carries a key, before anything else: compiled once. */
const findLive = compiledOnce<{ org_id: string; key: string; now: number }, Selectable<IdempotencyTable>>((db, p) =>
  db
    .selectFrom('idempotency_records')
    .selectAll()
    .where('org_id', '=', p('org_id'))
    .where('key', '=', p('key'))
    .where('expires_at', '>', p('now')),
);

export function idempotencyRepo(db: Kysely<Database>, dialect: Dialect) {
  return {
    /**
     * Claims `key` for a request with body digest `hash`. Exactly one of any number of racing
     * identical requests gets `claimed`: the primary key decides, in either dialect.
     */
    async claim(orgId: string, key: string, hash: string, now: number): Promise<IdempotencyClaim> {
      const inserted = await db
        .insertInto('idempotency_records')
        .values({
          org_id: orgId,
          key,
          request_hash: hash,
          state: 'in_flight',
          response_status: null,
          response_headers: null,
          response_body: null,
          created_at: now,
          expires_at: now + IDEMPOTENCY_TTL_MS,
        })
        .onConflict((oc) => oc.columns(['org_id', 'key']).doNothing())
        .executeTakeFirst();
      if ((inserted.numInsertedOrUpdatedRows ?? 0n) > 0n) return { kind: 'claimed', at: now };

      // Take over an expired record, or an abandoned claim, with a compare-and-set on its state.
      const takeover = await db
        .updateTable('idempotency_records')
        .set({
          request_hash: hash,
          state: 'in_flight',
          response_status: null,
          response_headers: null,
          response_body: null,
          created_at: now,
          expires_at: now + IDEMPOTENCY_TTL_MS,
        })
        .where('org_id', '=', orgId)
        .where('key', '=', key)
        .where((eb) =>
          eb.or([
            eb('expires_at', '<=', now),
            eb.and([eb('state', '=', 'in_flight'), eb('created_at', '<=', now - IN_FLIGHT_LEASE_MS)]),
          ]),
        )
        .executeTakeFirst();
      if (takeover.numUpdatedRows > 0n) return { kind: 'claimed', at: now };

      const row = await db
        .selectFrom('idempotency_records')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('key', '=', key)
        .executeTakeFirst();
      if (row === undefined) return this.claim(orgId, key, hash, now);
      if (row.request_hash !== hash) return { kind: 'conflict', reason: 'different_body' };
      if (row.state !== 'done' || row.response_status === null || row.response_body === null)
        return { kind: 'conflict', reason: 'in_progress' };
      return {
        kind: 'replay',
        response: {
          status: row.response_status,
          headers: JSON.parse(row.response_headers ?? '{}') as Record<string, string>,
          body: row.response_body,
        },
      };
    },

    /** Read-only check: a live completed record replays or conflicts; anything else is free. */
    async lookup(orgId: string, key: string, hash: string, now: number): Promise<IdempotencyClaim> {
      const row = (await findLive(db, dialect, { org_id: orgId, key, now })).rows[0];
      if (row === undefined || row.state !== 'done' || row.response_status === null || row.response_body === null)
        return { kind: 'claimed' };
      if (row.request_hash !== hash) return { kind: 'conflict', reason: 'different_body' };
      return {
        kind: 'replay',
        response: {
          status: row.response_status,
          headers: JSON.parse(row.response_headers ?? '{}') as Record<string, string>,
          body: row.response_body,
        },
      };
    },

    /** Writes a completed record, replacing an expired one. */
    async put(orgId: string, key: string, hash: string, response: StoredResponse, now: number, ttl: number): Promise<void> {
      await putRecord(db, dialect, {
        org_id: orgId,
        key,
        request_hash: hash,
        response_status: response.status,
        response_headers: JSON.stringify(response.headers),
        response_body: response.body,
        created_at: now,
        expires_at: now + ttl,
      });
    },

    /**
     * Completes the claim taken at `claimedAt`; false when it is no longer ours (a retry took it
     * over after IN_FLIGHT_LEASE_MS): the caller's transaction must then not commit.
     */
    async complete(orgId: string, key: string, response: StoredResponse, claimedAt?: number): Promise<boolean> {
      let q = db
        .updateTable('idempotency_records')
        .set({
          state: 'done',
          response_status: response.status,
          response_headers: JSON.stringify(response.headers),
          response_body: response.body,
        })
        .where('org_id', '=', orgId)
        .where('key', '=', key);
      if (claimedAt !== undefined) q = q.where('state', '=', 'in_flight').where('created_at', '=', claimedAt);
      return (await q.executeTakeFirst()).numUpdatedRows > 0n;
    },

    /** A request that failed before acceptance leaves no record: its retry runs afresh. */
    async release(orgId: string, key: string, claimedAt?: number): Promise<void> {
      let q = db
        .deleteFrom('idempotency_records')
        .where('org_id', '=', orgId)
        .where('key', '=', key)
        .where('state', '=', 'in_flight');
      // Only our own claim, never one a retry took over meanwhile.
      if (claimedAt !== undefined) q = q.where('created_at', '=', claimedAt);
      await q.execute();
    },

    async purgeExpired(now: number): Promise<number> {
      const r = await db.deleteFrom('idempotency_records').where('expires_at', '<=', now).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
