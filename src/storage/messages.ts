import type { Kysely, Selectable } from 'kysely';
import type { KeyType, MessageEvent, MessageStatus } from '../domain/types.js';
import { parseJson } from './json.js';
import type { Database, MessagesTable } from './schema.js';

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
}

function toRecord(row: Omit<Selectable<MessagesTable>, 'content' | 'attachments' | 'idempotency_key'>): StoredMessage {
  return {
    id: row.id,
    org_id: row.org_id,
    template_id: row.template_id,
    service_id: row.service_id,
    status: row.status as MessageStatus,
    status_token_hash: row.status_token_hash,
    key_type: row.key_type as KeyType,
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
  };
}

const SUMMARY_COLUMNS = [
  'id', 'org_id', 'template_id', 'service_id', 'status', 'status_token_hash', 'key_type', 'subject',
  'header_message_id', 'credit_taken', 'attempts', 'next_attempt_at', 'lease_until', 'last_error',
  'created_at', 'updated_at', 'sent_at',
] as const;

export function messagesRepo(db: Kysely<Database>) {
  return {
    async get(orgId: string, id: string): Promise<StoredMessage | undefined> {
      const row = await db.selectFrom('messages').select(SUMMARY_COLUMNS)
        .where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
      return row === undefined ? undefined : toRecord(row);
    },

    async events(messageId: string): Promise<MessageEvent[]> {
      const rows = await db.selectFrom('message_events').select(['type', 'at', 'detail'])
        .where('message_id', '=', messageId).orderBy('id').execute();
      return rows.map((r) => ({
        type: r.type,
        at: r.at,
        detail: r.detail === null ? null : parseJson<Record<string, unknown>>(r.detail, `event of ${messageId}`),
      }));
    },

    async appendEvent(messageId: string, type: string, at: number, detail?: Record<string, unknown>): Promise<void> {
      await db.insertInto('message_events')
        .values({ message_id: messageId, type, at, detail: detail === undefined ? null : JSON.stringify(detail) })
        .execute();
    },

    /**
     * Moves a message from one of `from` to `to`, only if it is still there: the compare-and-set
     * that keeps an operator's release or cancel from racing the worker.
     */
    async transition(
      orgId: string, id: string, from: readonly MessageStatus[], to: MessageStatus, now: number,
      extra: { credit_taken?: boolean; next_attempt_at?: number | null } = {},
    ): Promise<boolean> {
      const r = await db.updateTable('messages')
        .set({
          status: to,
          updated_at: now,
          ...(extra.credit_taken !== undefined ? { credit_taken: extra.credit_taken ? 1 : 0 } : {}),
          ...(extra.next_attempt_at !== undefined ? { next_attempt_at: extra.next_attempt_at } : {}),
        })
        .where('org_id', '=', orgId).where('id', '=', id).where('status', 'in', from)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    /** The oldest held messages of an organization, at most `limit` (release order). */
    async oldestHeld(orgId: string, limit: number): Promise<string[]> {
      if (limit <= 0) return [];
      const rows = await db.selectFrom('messages').select('id')
        .where('org_id', '=', orgId).where('status', '=', 'held')
        .orderBy('created_at').orderBy('id').limit(limit).execute();
      return rows.map((r) => r.id);
    },

    async countHeld(orgId: string): Promise<number> {
      const row = await db.selectFrom('messages').select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', orgId).where('status', '=', 'held').executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}
