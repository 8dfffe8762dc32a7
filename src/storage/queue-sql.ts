import { sql, type Kysely } from 'kysely';
import type { Dialect } from './dialect.js';
import type { Database } from './schema.js';
import { insertEvents, type NewEvent } from './webhook-outbox.js';

/**
 * The predicates of the partial indexes messages_due and messages_leased (migration 0012), as
 * literals: SQLite uses a partial index only when the statement's text implies its predicate,
 * and a bound `status = ?` does not.
 */
export const IS_QUEUED = sql<boolean>`status = 'queued'`;
export const IS_SENDING = sql<boolean>`status = 'sending'`;

/** Writes one timeline event of a message (and its webhook outbox rows) as the queue's transitions do. */
export type QueueEvent = (messageId: string, type: string, at: number, detail?: Record<string, unknown>) => Promise<unknown>;

/** Writes many timeline events (and their outbox rows) in multi-row inserts. */
export type QueueEvents = (events: readonly NewEvent[], now: number) => Promise<void>;

export function queueEventWriter(db: Kysely<Database>, dialect: Dialect): QueueEvent {
  return (messageId, type, at, detail) =>
    insertEvents(
      db,
      dialect,
      [{ message_id: messageId, type, at, detail: detail === undefined ? null : JSON.stringify(detail) }],
      at,
    );
}
