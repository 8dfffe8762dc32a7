import { sql, type Kysely, type Selectable } from 'kysely';
import type { KeyMode, KeyType, MessageEvent, MessageStatus } from '../domain/types.js';
import { keyModeColumn, keyTypeColumn, messageStatusColumn } from './columns.js';
import type { Dialect } from './dialect.js';
import { parseJson } from './json.js';
import { recipientsOf, type RecipientView } from './recipient-states.js';
import { historyPage, newestFirst, type HistoryFilter, type HistoryRow } from './history.js';
import type { Database, MessagesTable } from './schema.js';
import { insertEvents } from './webhook-outbox.js';
import { insertNewMessage, type NewMessage } from './message-insert.js';

export type { RecipientKind, RecipientState, RecipientView } from './recipient-states.js';
export type { NewMessage } from './message-insert.js';

export interface StoredMessage {
  id: string;
  org_id: string;
  template_id: string;
  service_id: string;
  status: MessageStatus;
  status_token_hash: string;
  key_type: KeyType;
  subject: string | null;
  header_message_id: string;
  credit_taken: boolean;
  attempts: number;
  next_attempt_at: number | null;
  lease_until: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  sent_at: number | null;
  /** The provider's id for the message, reported at hand-off; null when none was. */
  provider_message_id: string | null;
  /** The sending key's mode (issue 27). */
  mode: KeyMode;
  /** Some recipient is a simulator address: nothing was delivered or charged for it. */
  simulated: boolean;
}

function toRecord(row: Omit<Selectable<MessagesTable>, 'idempotency_key'>): StoredMessage {
  return {
    id: row.id,
    org_id: row.org_id,
    template_id: row.template_id,
    service_id: row.service_id,
    status: messageStatusColumn(row.status),
    status_token_hash: row.status_token_hash,
    key_type: keyTypeColumn(row.key_type),
    subject: row.subject,
    header_message_id: row.header_message_id,
    credit_taken: row.credit_taken === 1,
    attempts: row.attempts,
    next_attempt_at: row.next_attempt_at,
    lease_until: row.lease_until,
    last_error: row.last_error,
    created_at: row.created_at,
    updated_at: row.updated_at,
    sent_at: row.sent_at,
    provider_message_id: row.provider_message_id,
    mode: keyModeColumn(row.mode),
    simulated: row.simulated === 1,
  };
}

const SUMMARY_COLUMNS = [
  'id',
  'org_id',
  'template_id',
  'service_id',
  'status',
  'status_token_hash',
  'key_type',
  'subject',
  'header_message_id',
  'credit_taken',
  'attempts',
  'next_attempt_at',
  'lease_until',
  'last_error',
  'created_at',
  'updated_at',
  'sent_at',
  'provider_message_id',
  'mode',
  'simulated',
] as const;

export function messagesRepo(db: Kysely<Database>, dialect: Dialect) {
  return {
    /** The message, its recipients and its first event: call inside the acceptance transaction. */
    insert(m: NewMessage): Promise<void> {
      return insertNewMessage(db, dialect, m);
    },

    /**
     * Newest first by (created_at, id); every filter is the prefix of an index. Several
     * statuses run as one query each, merged: an `IN` list cannot walk the status index in time
     * order, so it sorted every match (5–6 ms at 1 M messages against 0.6 ms merged).
     */
    async history(orgId: string, f: HistoryFilter, limit: number): Promise<HistoryRow[]> {
      const statuses = f.statuses ?? [];
      if (statuses.length <= 1) return historyPage(db, dialect, orgId, f, limit);
      const pages = await Promise.all(statuses.map((s) => historyPage(db, dialect, orgId, { ...f, statuses: [s] }, limit)));
      return newestFirst(pages, limit);
    },

    /**
     * Retention: messages created before `before` are deleted with their content, recipients
     * and events (foreign keys cascade) and the provider events matched to them, at most `limit`
     * per call so a large backlog never holds the write lock for long. Returns their attachment
     * references and captured-inbox blob key for blob cleanup. `mode: 'test'` purges test
     * messages only (their own, shorter retention), through the partial index messages_test.
     */
    async purgeOlderThan(
      before: number,
      limit: number,
      mode?: 'test',
    ): Promise<Array<{ id: string; attachments: string | null; inbox_blob: string | null }>> {
      let q = db
        .selectFrom('messages')
        .leftJoin('message_contents', 'message_contents.message_id', 'messages.id')
        .leftJoin('test_inbox', 'test_inbox.message_id', 'messages.id')
        .select(['messages.id as id', 'message_contents.attachments as attachments', 'test_inbox.blob_key as inbox_blob'])
        .where('messages.created_at', '<', before)
        .where('messages.status', '!=', 'sending');
      // A literal, so SQLite matches the partial index (migration 0012's note).
      if (mode === 'test') q = q.where(sql<boolean>`messages.mode = 'test'`);
      const old = await q.limit(limit).execute();
      if (old.length > 0) {
        const ids = old.map((m) => m.id);
        await db.deleteFrom('messages').where('id', 'in', ids).execute();
        // Provider events keep no foreign key (an unmatched one has no message): they go here.
        await db.deleteFrom('provider_events').where('message_id', 'in', ids).execute();
        // Webhook deliveries too (no foreign key, see migration 0006); their attempts cascade.
        await db.deleteFrom('webhook_deliveries').where('message_id', 'in', ids).execute();
      }
      return old;
    },

    /** The stored rendered email (JSON) of a message. */
    async content(messageId: string): Promise<{ content: string; attachments: string | null } | undefined> {
      return db
        .selectFrom('message_contents')
        .select(['content', 'attachments'])
        .where('message_id', '=', messageId)
        .executeTakeFirst();
    },

    /**
     * A submitted message's bytes (SMTP submission, migration 0016), read once per attempt: the
     * claim never selects them (up to 22.6 MB each). Undefined when there is no row or no bytes.
     */
    async submittedMime(messageId: string): Promise<Buffer | undefined> {
      const row = await db.selectFrom('message_contents').select('mime').where('message_id', '=', messageId).executeTakeFirst();
      // PostgreSQL's bytea and SQLite's blob both arrive as Buffers; a Uint8Array is taken as is.
      const mime = row?.mime;
      return mime === null || mime === undefined ? undefined : Buffer.from(mime.buffer, mime.byteOffset, mime.byteLength);
    },

    /** To-addresses of these messages, in insertion order. */
    async toAddresses(messageIds: readonly string[]): Promise<Map<string, string[]>> {
      const out = new Map<string, string[]>();
      if (messageIds.length === 0) return out;
      const rows = await db
        .selectFrom('message_recipients')
        .select(['message_id', 'email'])
        .where('message_id', 'in', messageIds)
        .where('kind', '=', 'to')
        .execute();
      for (const r of rows) {
        const list = out.get(r.message_id) ?? [];
        list.push(r.email);
        out.set(r.message_id, list);
      }
      return out;
    },

    /** Each recipient of a message with its own state (recipient-states.ts). */
    recipientsOf(message: Pick<StoredMessage, 'id' | 'status'>): Promise<RecipientView[]> {
      return recipientsOf(db, message);
    },

    async get(orgId: string, id: string): Promise<StoredMessage | undefined> {
      const row = await db
        .selectFrom('messages')
        .select(SUMMARY_COLUMNS)
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row === undefined ? undefined : toRecord(row);
    },

    async events(messageId: string): Promise<MessageEvent[]> {
      const rows = await db
        .selectFrom('message_events')
        .select(['type', 'at', 'detail'])
        .where('message_id', '=', messageId)
        .orderBy('id')
        .execute();
      return rows.map((r) => ({
        type: r.type,
        at: r.at,
        detail: r.detail === null ? null : parseJson<Record<string, unknown>>(r.detail, `event of ${messageId}`),
      }));
    },

    /**
     * Appends an event that happened at `at`, written at `now`: its webhook deliveries fall due
     * at `now`. A provider's event can say it happened hours before or after we hear of it
     * (`at`, up to a day ahead): the webhook still goes out as soon as it is recorded.
     */
    async appendEvent(messageId: string, type: string, at: number, now: number, detail?: Record<string, unknown>): Promise<void> {
      await insertEvents(
        db,
        dialect,
        [{ message_id: messageId, type, at, detail: detail === undefined ? null : JSON.stringify(detail) }],
        now,
      );
    },

    /**
     * Moves a message from one of `from` to `to`, only if it is still there: the compare-and-set
     * that keeps an operator's release or cancel from racing the worker.
     */
    async transition(
      orgId: string,
      id: string,
      from: readonly MessageStatus[],
      to: MessageStatus,
      now: number,
      extra: { credit_taken?: boolean; next_attempt_at?: number | null } = {},
    ): Promise<boolean> {
      const r = await db
        .updateTable('messages')
        .set({
          status: to,
          updated_at: now,
          ...(extra.credit_taken !== undefined ? { credit_taken: extra.credit_taken ? 1 : 0 } : {}),
          ...(extra.next_attempt_at !== undefined ? { next_attempt_at: extra.next_attempt_at } : {}),
        })
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .where('status', 'in', from)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    /** The oldest held messages of an organization, at most `limit` (release order). */
    async oldestHeld(orgId: string, limit: number): Promise<string[]> {
      if (limit <= 0) return [];
      const rows = await db
        .selectFrom('messages')
        .select('id')
        .where('org_id', '=', orgId)
        .where('status', '=', 'held')
        .orderBy('created_at')
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map((r) => r.id);
    },

    async countHeld(orgId: string): Promise<number> {
      const row = await db
        .selectFrom('messages')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', orgId)
        .where('status', '=', 'held')
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}
