import type { Kysely, Selectable } from 'kysely';
import { compiledOnce } from './compiled.js';
import type { Dialect } from './dialect.js';
import type { Database, IdempotencyTable } from './schema.js';

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type IdempotencyClaim =
  | { kind: 'claimed' }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'conflict'; reason: 'different_body' | 'in_progress' };

/** Spec, Idempotency: keys are remembered for 24 hours. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * A claim whose request never finished (the process died between claim and reply) is taken
 * over after this long, so one crash does not block a key's retries for a whole day. 60 s is
 * far above any send's own time on this path (milliseconds).
 */
export const IN_FLIGHT_LEASE_MS = 60_000;

const putRecord = compiledOnce<{
  org_id: string; key: string; request_hash: string; response_status: number; response_headers: string;
  response_body: string; created_at: number; expires_at: number;
}>((db, p) => {
  const values = {
    request_hash: p('request_hash'), state: 'done', response_status: p('response_status'),
    response_headers: p('response_headers'), response_body: p('response_body'),
    created_at: p('created_at'), expires_at: p('expires_at'),
  };
  return db.insertInto('idempotency_records').values({ org_id: p('org_id'), key: p('key'), ...values })
    .onConflict((oc) => oc.columns(['org_id', 'key']).doUpdateSet(values));
});

/** Read on every send that carries a key, before anything else: compiled once. */
const findLive = compiledOnce<{ org_id: string; key: string; now: number }, Selectable<IdempotencyTable>>((db, p) => db.selectFrom('idempotency_records').selectAll()
  .where('org_id', '=', p('org_id')).where('key', '=', p('key')).where('expires_at', '>', p('now')));

export function idempotencyRepo(db: Kysely<Database>, dialect: Dialect) {
  return {
    /**
     * Claims `key` for a request with body digest `hash`. Exactly one of any number of racing
     * identical requests gets `claimed`: the primary key decides, in either dialect.
     */
    async claim(orgId: string, key: string, hash: string, now: number): Promise<IdempotencyClaim> {
      const inserted = await db.insertInto('idempotency_records')
        .values({ org_id: orgId, key, request_hash: hash, state: 'in_flight', response_status: null, response_headers: null, response_body: null, created_at: now, expires_at: now + IDEMPOTENCY_TTL_MS })
        .onConflict((oc) => oc.columns(['org_id', 'key']).doNothing())
        .executeTakeFirst();
      if ((inserted.numInsertedOrUpdatedRows ?? 0n) > 0n) return { kind: 'claimed' };

      // Take over an expired record, or an abandoned claim, with a compare-and-set on its state.
      const takeover = await db.updateTable('idempotency_records')
        .set({ request_hash: hash, state: 'in_flight', response_status: null, response_headers: null, response_body: null, created_at: now, expires_at: now + IDEMPOTENCY_TTL_MS })
        .where('org_id', '=', orgId).where('key', '=', key)
        .where((eb) => eb.or([
          eb('expires_at', '<=', now),
          eb.and([eb('state', '=', 'in_flight'), eb('created_at', '<=', now - IN_FLIGHT_LEASE_MS)]),
        ]))
        .executeTakeFirst();
      if (takeover.numUpdatedRows > 0n) return { kind: 'claimed' };

      const row = await db.selectFrom('idempotency_records').selectAll()
        .where('org_id', '=', orgId).where('key', '=', key).executeTakeFirst();
      if (row === undefined) return this.claim(orgId, key, hash, now);
      if (row.request_hash !== hash) return { kind: 'conflict', reason: 'different_body' };
      if (row.state !== 'done' || row.response_status === null || row.response_body === null) return { kind: 'conflict', reason: 'in_progress' };
      return {
        kind: 'replay',
        response: { status: row.response_status, headers: JSON.parse(row.response_headers ?? '{}') as Record<string, string>, body: row.response_body },
      };
    },

    /** Read-only check: a live completed record replays or conflicts; anything else is free. */
    async lookup(orgId: string, key: string, hash: string, now: number): Promise<IdempotencyClaim> {
      const row = (await findLive(db, dialect, { org_id: orgId, key, now })).rows[0];
      if (row === undefined || row.state !== 'done' || row.response_status === null || row.response_body === null) return { kind: 'claimed' };
      if (row.request_hash !== hash) return { kind: 'conflict', reason: 'different_body' };
      return {
        kind: 'replay',
        response: { status: row.response_status, headers: JSON.parse(row.response_headers ?? '{}') as Record<string, string>, body: row.response_body },
      };
    },

    /** Writes a completed record, replacing an expired one. */
    async put(orgId: string, key: string, hash: string, response: StoredResponse, now: number, ttl: number): Promise<void> {
      await putRecord(db, dialect, {
        org_id: orgId, key, request_hash: hash, response_status: response.status,
        response_headers: JSON.stringify(response.headers), response_body: response.body, created_at: now, expires_at: now + ttl,
      });
    },

    async complete(orgId: string, key: string, response: StoredResponse): Promise<void> {
      await db.updateTable('idempotency_records')
        .set({ state: 'done', response_status: response.status, response_headers: JSON.stringify(response.headers), response_body: response.body })
        .where('org_id', '=', orgId).where('key', '=', key)
        .execute();
    },

    /** A request that failed before acceptance leaves no record: its retry runs afresh. */
    async release(orgId: string, key: string): Promise<void> {
      await db.deleteFrom('idempotency_records')
        .where('org_id', '=', orgId).where('key', '=', key).where('state', '=', 'in_flight')
        .execute();
    },

    async purgeExpired(now: number): Promise<number> {
      const r = await db.deleteFrom('idempotency_records').where('expires_at', '<=', now).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
