import { sql, type Kysely } from 'kysely';
import type { MessageStatus } from '../domain/types.js';
import { messageStatusColumn } from './columns.js';
import { recipientStateColumn, type RecipientState } from './recipient-states.js';
import type { Dialect } from './dialect.js';
import type { Database, ProviderEventsTable } from './schema.js';
import { bracketed } from '../mime/head.js';

/** A provider event as stored (see migration 0004 and schema.ts). */
export type ProviderEventRow = ProviderEventsTable;

/** What recording an event needs to know of the message it matched. */
export interface MatchedMessage {
  id: string;
  org_id: string;
  service_id: string;
  status: MessageStatus;
  credit_taken: boolean;
  /** The provider's id recorded at hand-off, if any (a settle looks for early events naming it). */
  provider_message_id: string | null;
}

export interface StoredRecipient {
  email: string;
  kind: string;
  state: RecipientState;
}

/** How an event names its message; see ProviderEvent.match. `orgId` null: by our id only. */
export interface MessageLookup {
  orgId: string | null;
  messageId?: string;
  providerMessageId?: string;
  headerMessageId?: string;
}

/** An event that arrived before its message was settled, as a settle reads it back (src/events/early.ts). */
export interface EarlyEventRow {
  source: string;
  scope: string;
  event_key: string;
  /** Null: stored unmatched, found by the provider id the settle just recorded. */
  message_id: string | null;
  org_id: string | null;
  provider_message_id: string | null;
  detail: string;
}

/** A message being settled: its id, organization, and the provider id this settle records. */
export interface SettlingMessage {
  id: string;
  orgId: string;
  providerMessageId?: string | undefined;
}

/** Events and settles that name one (organization, provider id) take one lock (lockProviderIds). */
const PROVIDER_ID_LOCK_CLASS = 4_242_013;

const EARLY_COLUMNS = 'source, scope, event_key, message_id, org_id, provider_message_id, detail, received_at';

const MATCH_COLUMNS = ['id', 'org_id', 'service_id', 'status', 'credit_taken', 'provider_message_id'] as const;

export function providerEventsRepo(db: Kysely<Database>, dialect: Dialect) {
  const toMatched = (row: {
    id: string;
    org_id: string;
    service_id: string;
    status: string;
    credit_taken: number;
    provider_message_id: string | null;
  }): MatchedMessage => ({
    id: row.id,
    org_id: row.org_id,
    service_id: row.service_id,
    status: messageStatusColumn(row.status),
    credit_taken: row.credit_taken === 1,
    provider_message_id: row.provider_message_id,
  });

  return {
    /** Stores the event unless (source, scope, event_key) is already there; returns whether it was new. */
    async insertIfNew(row: ProviderEventRow): Promise<boolean> {
      const r = await db
        .insertInto('provider_events')
        .values(row)
        .onConflict((oc) => oc.columns(['source', 'scope', 'event_key']).doNothing())
        .executeTakeFirst();
      return (r.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },

    /**
     * The message an event is about, tried most specific first: our id, the provider's id, our
     * Message-ID header. Every lookup is scoped to the organization whose verified source sent
     * the event, so one organization's provider can never touch another's messages; without an
     * organization (a VERP token, whose MAC names the message) only our own id is trusted.
     */
    async findMessage(m: MessageLookup): Promise<MatchedMessage | undefined> {
      // PostgreSQL: the row stays locked to the end of the transaction, so two events about
      // one message recorded at once (two recipients' bounces) see each other's recipient
      // state and the status they add up to is not lost. SQLite has one writer already.
      const base = () => {
        const q = db.selectFrom('messages').select(MATCH_COLUMNS);
        return dialect === 'postgres' ? q.forUpdate() : q;
      };
      if (m.messageId !== undefined) {
        let q = base().where('id', '=', m.messageId);
        if (m.orgId !== null) q = q.where('org_id', '=', m.orgId);
        const row = await q.executeTakeFirst();
        if (row !== undefined) return toMatched(row);
      }
      if (m.orgId === null) return undefined;
      if (m.providerMessageId !== undefined && m.providerMessageId !== '') {
        // Newest first: a provider id is unique in practice, but if an id were ever reused the
        // latest message is the likelier subject.
        const row = await base()
          .where('provider_message_id', '=', m.providerMessageId)
          .where('org_id', '=', m.orgId)
          .orderBy('created_at', 'desc')
          .limit(1)
          .executeTakeFirst();
        if (row !== undefined) return toMatched(row);
      }
      if (m.headerMessageId !== undefined && m.headerMessageId.trim() !== '') {
        const row = await base()
          .where('header_message_id', '=', bracketed(m.headerMessageId))
          .where('org_id', '=', m.orgId)
          .limit(1)
          .executeTakeFirst();
        if (row !== undefined) return toMatched(row);
      }
      return undefined;
    },

    /** Every recipient row of a message with its stored state (`pending` as stored). */
    async recipients(messageId: string): Promise<StoredRecipient[]> {
      const rows = await db
        .selectFrom('message_recipients')
        .select(['email', 'kind', 'state'])
        .where('message_id', '=', messageId)
        .execute();
      return rows.map((r) => ({ email: r.email, kind: r.kind, state: recipientStateColumn(r.state) }));
    },

    /** The stored events (as recorded, JSON) of one message, in arrival order. */
    async storedEvents(messageId: string): Promise<string[]> {
      const rows = await db
        .selectFrom('provider_events')
        .select('detail')
        .where('message_id', '=', messageId)
        .orderBy('received_at')
        .orderBy('event_key')
        .execute();
      return rows.map((r) => r.detail);
    },

    /**
     * PostgreSQL: serializes, to the end of the transaction, an event naming a provider id and
     * the settle that records that id (both take this lock first, before any row lock, in one
     * sorted order, so they cannot deadlock). Without it an event could miss the id the settle
     * has not committed yet while the settle misses the event not committed yet: stored
     * unmatched, and found by no one. SQLite runs one transaction at a time already.
     */
    async lockProviderIds(keys: ReadonlyArray<{ orgId: string; providerMessageId: string }>): Promise<void> {
      if (dialect !== 'postgres' || keys.length === 0) return;
      const texts = [...new Set(keys.map((k) => `${k.orgId} ${k.providerMessageId}`))];
      // A 32-bit hash: two ids sharing a lock only wait for each other.
      await sql`select pg_advisory_xact_lock(${PROVIDER_ID_LOCK_CLASS}, s.h) from (
        select distinct hashtext(k) as h from unnest(cast(${texts} as text[])) as k order by h) as s`.execute(db);
    },

    /**
     * The events a settle must apply, in arrival order: those matched to these messages while
     * they were not settled, and those stored unmatched that name the provider id the settle
     * records, in the message's organization. One statement for a whole batch of settles.
     */
    async earlyEvents(messages: readonly SettlingMessage[]): Promise<EarlyEventRow[]> {
      if (messages.length === 0) return [];
      const named = messages.filter((m) => m.providerMessageId !== undefined && m.providerMessageId !== '');
      const ids = messages.map((m) => m.id);
      const orgs = [...new Set(named.map((m) => m.orgId))];
      const pids = named.map((m) => m.providerMessageId ?? '');
      // One fixed text whatever the batch (lists bound as one array each): the query builder's
      // IN lists cost ~300 µs a batch of 15 on SQLite, building and preparing a new text each
      // time, and PostgreSQL could not keep it prepared (prepared-pool.ts). SQLite is told the
      // index (migration 0013): without statistics it chose provider_events_message for
      // `message_id is null`, a walk over every unmatched event.
      const rows = (
        dialect === 'postgres'
          ? await sql<EarlyEventRow & { received_at: number }>`select ${sql.raw(EARLY_COLUMNS)} from provider_events
            where message_id = any(cast(${ids} as text[]))
            union all select ${sql.raw(EARLY_COLUMNS)} from provider_events
            where message_id is null and org_id = any(cast(${orgs} as text[])) and provider_message_id = any(cast(${pids} as
            text[]))`.execute(db)
          : await sql<EarlyEventRow & { received_at: number }>`select ${sql.raw(EARLY_COLUMNS)} from provider_events
            where message_id in (select value from json_each(${JSON.stringify(ids)}))
            union all select ${sql.raw(EARLY_COLUMNS)} from provider_events indexed by provider_events_unmatched_provider_id
            where message_id is null and org_id in (select value from json_each(${JSON.stringify(orgs)}))
            and provider_message_id in (select value from json_each(${JSON.stringify(pids)}))`.execute(db)
      ).rows;
      const orgOf = new Map(named.map((m) => [m.providerMessageId ?? '', m.orgId]));
      return rows
        .filter((r) => r.message_id !== null || (r.provider_message_id !== null && orgOf.get(r.provider_message_id) === r.org_id))
        .sort(
          (a, b) =>
            Number(a.received_at) - Number(b.received_at) || (a.event_key < b.event_key ? -1 : a.event_key > b.event_key ? 1 : 0),
        )
        .map(({ received_at: _at, ...r }) => r);
    },

    /** Gives an unmatched event its message, unless another settle already did; returns whether this one did. */
    async claimEvent(key: Pick<EarlyEventRow, 'source' | 'scope' | 'event_key'>, messageId: string): Promise<boolean> {
      const r = await db
        .updateTable('provider_events')
        .set({ message_id: messageId })
        .where('source', '=', key.source)
        .where('scope', '=', key.scope)
        .where('event_key', '=', key.event_key)
        .where('message_id', 'is', null)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    /** Sets one recipient's state, only from `from` (the caller's forward-only check, as a compare-and-set). */
    async setRecipientState(
      messageId: string,
      email: string,
      from: RecipientState,
      to: RecipientState,
      reason: string | null,
      now: number,
    ): Promise<boolean> {
      const r = await db
        .updateTable('message_recipients')
        .set({ state: to, reason, updated_at: now })
        .where('message_id', '=', messageId)
        .where('email', '=', email)
        .where('state', '=', from)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    /**
     * Retention for events that matched no message (matched ones go with their message, see
     * messages.purgeOlderThan): they hold recipient addresses too, so those received before
     * `before` are deleted, at most `limit` per call so a backlog never holds the write lock
     * for long. Returns how many went.
     */
    async purgeUnmatchedBefore(before: number, limit: number): Promise<number> {
      const keys = await db
        .selectFrom('provider_events')
        .select(['source', 'scope', 'event_key'])
        .where('message_id', 'is', null)
        .where('received_at', '<', before)
        .orderBy('received_at')
        .limit(limit)
        .execute();
      if (keys.length === 0) return 0;
      await db
        .deleteFrom('provider_events')
        .where('message_id', 'is', null)
        .where((eb) =>
          eb.or(
            keys.map((k) => eb.and([eb('source', '=', k.source), eb('scope', '=', k.scope), eb('event_key', '=', k.event_key)])),
          ),
        )
        .execute();
      return keys.length;
    },

    /** How many events are stored, per outcome (tests and operators). */
    async count(filter: { source?: string; matched?: boolean } = {}): Promise<number> {
      let q = db.selectFrom('provider_events').select((eb) => eb.fn.countAll<number>().as('n'));
      if (filter.source !== undefined) q = q.where('source', '=', filter.source);
      if (filter.matched === true) q = q.where('message_id', 'is not', null);
      if (filter.matched === false) q = q.where('message_id', 'is', null);
      const row = await q.executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}
