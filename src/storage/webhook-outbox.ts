import { CompiledQuery, type Kysely } from 'kysely';
import type { Dialect } from './dialect.js';
import type { Database } from './schema.js';

/**
 * The outbox of outbound webhooks (issue 13): every message event is written through here, and
 * the same transaction adds one `webhook_deliveries` row per enabled endpoint of the message's
 * organization that subscribes to the event (`*` or `,message.<type>,` in its list). A crash
 * can therefore lose an event and its deliveries together or neither.
 *
 * The fan-out is one INSERT … SELECT for any number of events: event → message (its org and
 * status, the status the event left it in, since writers move the message first) → endpoints
 * (primary key prefix org_id). An organization without endpoints pays one empty index probe
 * per statement. `sequence` is the event's rank in its message's timeline (1, 2, …), computed
 * only for rows that fan out; receivers order one message's events by it.
 *
 * The SQL is written once, by hand, for both dialects: the only difference is the placeholder.
 */
const fanOutSql = (where: string) => `
insert into webhook_deliveries
  (org_id, endpoint_id, event_id, message_id, event_type, message_status, sequence, state, attempts, next_attempt_at, created_at, updated_at)
select w.org_id, w.id, e.id, e.message_id, 'message.' || e.type, m.status,
  (select count(*) from message_events x where x.message_id = e.message_id and x.id <= e.id),
  'pending', 0, ?, ?, ?
from message_events e
join messages m on m.id = e.message_id
join webhook_endpoints w on w.org_id = m.org_id and w.enabled = 1
  and (w.events = '*' or w.events like '%,message.' || e.type || ',%')
where ${where}`;

function numbered(text: string, dialect: Dialect): string {
  if (dialect === 'sqlite') return text;
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

const byMessage = new Map<Dialect, string>();

/** Fans out every event of these messages: for a message just inserted, its first event. */
export async function fanOutNewMessage(db: Kysely<Database>, dialect: Dialect, messageId: string, now: number): Promise<void> {
  let text = byMessage.get(dialect);
  if (text === undefined) {
    text = numbered(fanOutSql('e.message_id = ?'), dialect);
    byMessage.set(dialect, text);
  }
  await db.executeQuery(CompiledQuery.raw(text, [now, now, now, messageId]));
}

/** Fans out these events (ids from the insert's RETURNING), in slices under parameter limits. */
export async function fanOutEvents(db: Kysely<Database>, dialect: Dialect, eventIds: readonly number[], now: number): Promise<void> {
  for (let i = 0; i < eventIds.length; i += 500) {
    const slice = eventIds.slice(i, i + 500);
    const text = numbered(fanOutSql(`e.id in (${slice.map(() => '?').join(', ')})`), dialect);
    await db.executeQuery(CompiledQuery.raw(text, [now, now, now, ...slice]));
  }
}

export interface NewEvent {
  message_id: string;
  type: string;
  at: number;
  detail: string | null;
}

/**
 * The one writer of message events after acceptance: inserts them and fans them out to the
 * webhook outbox in the caller's transaction. `now` is when the deliveries fall due.
 */
export async function insertEvents(db: Kysely<Database>, dialect: Dialect, events: readonly NewEvent[], now: number): Promise<void> {
  if (events.length === 0) return;
  const ids: number[] = [];
  for (let i = 0; i < events.length; i += 500) {
    const rows = await db.insertInto('message_events').values(events.slice(i, i + 500)).returning('id').execute();
    for (const r of rows) ids.push(Number(r.id));
  }
  await fanOutEvents(db, dialect, ids, now);
}
