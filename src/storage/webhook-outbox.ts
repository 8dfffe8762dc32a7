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
 * per statement. A range replay (webhook-delivery-log.ts) runs the same statement for one
 * endpoint, enabled or not, over the events of a slice of messages.
 *
 * `sequence` is the event's rank in its message's timeline (1, 2, …), computed only for rows
 * that fan out; receivers order one message's events by it, and `webhook-id` is
 * `<message_id>.<sequence>`. The rank counts the events with a smaller id, so it is unique only
 * because every writer of a message's events locks the message row first in the same
 * transaction (an UPDATE of its status or lease, or provider-events.ts's SELECT … FOR UPDATE):
 * on PostgreSQL that lock makes a second writer wait until the first commits, so the second
 * counts the first's event; SQLite has one writer at a time. A new writer of message events
 * must do the same, or two events of one message could get one rank (and one webhook-id).
 *
 * The SQL is written once, by hand, for both dialects: the only difference is the placeholder.
 */
const fanOutSql = (endpoints: string, where: string) => `
insert into webhook_deliveries
  (org_id, endpoint_id, event_id, message_id, event_type, message_status, sequence, state, attempts, next_attempt_at,
  created_at, updated_at)
select w.org_id, w.id, e.id, e.message_id, 'message.' || e.type, m.status,
  (select count(*) from message_events x where x.message_id = e.message_id and x.id <= e.id),
  'pending', 0, ?, ?, ?
from message_events e
join messages m on m.id = e.message_id
join webhook_endpoints w on w.org_id = m.org_id and ${endpoints}
  and (w.events = '*' or w.events like '%,message.' || e.type || ',%')
where ${where}
on conflict (org_id, endpoint_id, event_id) do nothing`;

function numbered(text: string, dialect: Dialect): string {
  if (dialect === 'sqlite') return text;
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/** Which events fan out, and to which endpoints. */
export type FanOut =
  /** Every event of a message just inserted (its first), to the enabled endpoints. */
  | { kind: 'message'; messageId: string }
  /** These events (ids from the insert's RETURNING, at most 500), to the enabled endpoints. */
  | { kind: 'events'; eventIds: readonly number[] }
  /** A range replay: the events of these messages (at most 500) in [since, until), to one endpoint, enabled or not. */
  | { kind: 'replay'; orgId: string; endpointId: string; messageIds: readonly string[]; since: number; until: number };

const byMessage = new Map<Dialect, string>();

function statement(dialect: Dialect, f: FanOut): { text: string; params: ReadonlyArray<string | number> } {
  switch (f.kind) {
    case 'message': {
      let text = byMessage.get(dialect);
      if (text === undefined) {
        text = numbered(fanOutSql('w.enabled = 1', 'e.message_id = ?'), dialect);
        byMessage.set(dialect, text);
      }
      return { text, params: [f.messageId] };
    }
    case 'events':
      return { text: numbered(fanOutSql('w.enabled = 1', `e.id in (${marks(f.eventIds.length)})`), dialect), params: f.eventIds };
    case 'replay':
      return {
        text: numbered(
          fanOutSql('w.id = ?', `m.org_id = ? and e.message_id in (${marks(f.messageIds.length)}) and e.at >= ? and e.at < ?`),
          dialect,
        ),
        params: [f.endpointId, f.orgId, ...f.messageIds, f.since, f.until],
      };
  }
}

/**
 * The one fan-out statement (see above): deliveries due at `now`; an event an endpoint already
 * has a delivery of is skipped. Returns how many deliveries it added.
 */
export async function fanOut(db: Kysely<Database>, dialect: Dialect, f: FanOut, now: number): Promise<number> {
  const { text, params } = statement(dialect, f);
  const result = await db.executeQuery(CompiledQuery.raw(text, [now, now, now, ...params]));
  return Number(result.numAffectedRows ?? 0n);
}

/** Fans out every event of these messages: for a message just inserted, its first event. */
export async function fanOutNewMessage(db: Kysely<Database>, dialect: Dialect, messageId: string, now: number): Promise<void> {
  await fanOut(db, dialect, { kind: 'message', messageId }, now);
}

/** 500 ids a statement: well under SQLite's and PostgreSQL's parameter limits. */
const SLICE = 500;

/** Fans out these events (ids from the insert's RETURNING), in slices under parameter limits. */
export async function fanOutEvents(
  db: Kysely<Database>,
  dialect: Dialect,
  eventIds: readonly number[],
  now: number,
): Promise<void> {
  for (let i = 0; i < eventIds.length; i += SLICE)
    await fanOut(db, dialect, { kind: 'events', eventIds: eventIds.slice(i, i + SLICE) }, now);
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
export async function insertEvents(
  db: Kysely<Database>,
  dialect: Dialect,
  events: readonly NewEvent[],
  now: number,
): Promise<void> {
  if (events.length === 0) return;
  const ids: number[] = [];
  for (let i = 0; i < events.length; i += SLICE) {
    const rows = await db
      .insertInto('message_events')
      .values(events.slice(i, i + SLICE))
      .returning('id')
      .execute();
    for (const r of rows) ids.push(Number(r.id));
  }
  await fanOutEvents(db, dialect, ids, now);
}
