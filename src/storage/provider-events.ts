import type { Kysely } from 'kysely';
import type { MessageStatus } from '../domain/types.js';
import { messageStatusColumn } from './columns.js';
import { recipientStateColumn, type RecipientState } from './recipient-states.js';
import type { Dialect } from './dialect.js';
import type { Database, ProviderEventsTable } from './schema.js';

/** A provider event as stored (see migration 0004 and schema.ts). */
export type ProviderEventRow = ProviderEventsTable;

/** What recording an event needs to know of the message it matched. */
export interface MatchedMessage {
  id: string;
  org_id: string;
  service_id: string;
  status: MessageStatus;
  credit_taken: boolean;
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

const MATCH_COLUMNS = ['id', 'org_id', 'service_id', 'status', 'credit_taken'] as const;

/** `<id@host>` and `id@host` name the same Message-ID header; stored ones have the brackets. */
const bracketed = (id: string): string => {
  const bare = id.trim().replace(/^<|>$/g, '');
  return `<${bare}>`;
};

export function providerEventsRepo(db: Kysely<Database>, dialect: Dialect) {
  const toMatched = (row: { id: string; org_id: string; service_id: string; status: string; credit_taken: number }): MatchedMessage => ({
    id: row.id, org_id: row.org_id, service_id: row.service_id, status: messageStatusColumn(row.status), credit_taken: row.credit_taken === 1,
  });

  return {
    /** Stores the event unless (source, scope, event_key) is already there; returns whether it was new. */
    async insertIfNew(row: ProviderEventRow): Promise<boolean> {
      const r = await db.insertInto('provider_events').values(row)
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
        const row = await base().where('provider_message_id', '=', m.providerMessageId).where('org_id', '=', m.orgId)
          .orderBy('created_at', 'desc').limit(1).executeTakeFirst();
        if (row !== undefined) return toMatched(row);
      }
      if (m.headerMessageId !== undefined && m.headerMessageId.trim() !== '') {
        const row = await base().where('header_message_id', '=', bracketed(m.headerMessageId)).where('org_id', '=', m.orgId)
          .limit(1).executeTakeFirst();
        if (row !== undefined) return toMatched(row);
      }
      return undefined;
    },

    /** Every recipient row of a message with its stored state (`pending` as stored). */
    async recipients(messageId: string): Promise<StoredRecipient[]> {
      const rows = await db.selectFrom('message_recipients').select(['email', 'kind', 'state'])
        .where('message_id', '=', messageId).execute();
      return rows.map((r) => ({ email: r.email, kind: r.kind, state: recipientStateColumn(r.state) }));
    },

    /** The stored events (as recorded, JSON) of one message, in arrival order. */
    async storedEvents(messageId: string): Promise<string[]> {
      const rows = await db.selectFrom('provider_events').select('detail')
        .where('message_id', '=', messageId).orderBy('received_at').orderBy('event_key').execute();
      return rows.map((r) => r.detail);
    },

    /** Sets one recipient's state, only from `from` (the caller's forward-only check, as a compare-and-set). */
    async setRecipientState(messageId: string, email: string, from: RecipientState, to: RecipientState, reason: string | null, now: number): Promise<boolean> {
      const r = await db.updateTable('message_recipients').set({ state: to, reason, updated_at: now })
        .where('message_id', '=', messageId).where('email', '=', email).where('state', '=', from)
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
      const keys = await db.selectFrom('provider_events').select(['source', 'scope', 'event_key'])
        .where('message_id', 'is', null).where('received_at', '<', before)
        .orderBy('received_at').limit(limit).execute();
      if (keys.length === 0) return 0;
      await db.deleteFrom('provider_events').where('message_id', 'is', null)
        .where((eb) => eb.or(keys.map((k) => eb.and([eb('source', '=', k.source), eb('scope', '=', k.scope), eb('event_key', '=', k.event_key)]))))
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
