import type { Kysely } from 'kysely';
import { oneOf } from './columns.js';
import type { Database } from './schema.js';

/**
 * The simulator's scheduled events (issue 27 §3): written when the sandbox accepts a simulator
 * address, read by src/testmode/simulator-events.ts when due. One row per event key
 * (`${message_id}:${recipient}:${type}`), so a retried hand-off schedules nothing twice.
 */

export interface NewSimulatorEvent {
  message_id: string;
  org_id: string;
  recipient: string;
  type: 'delivered' | 'bounced' | 'complained';
  bounce_type: string | null;
  status: string | null;
  reason: string | null;
  due_at: number;
  event_key: string;
}

export interface DueSimulatorEvent extends NewSimulatorEvent {
  id: number;
  /** The message's status now: an event waits while its message is still on its way. */
  message_status: string;
}

const eventType = oneOf('simulator_events.type', ['delivered', 'bounced', 'complained'] as const);

export function simulatorEventsRepo(db: Kysely<Database>) {
  return {
    async schedule(rows: NewSimulatorEvent[]): Promise<void> {
      if (rows.length === 0) return;
      await db
        .insertInto('simulator_events')
        .values(rows.map((r) => ({ ...r })))
        .onConflict((oc) => oc.column('event_key').doNothing())
        .execute();
    },

    /** Events due at `now`, oldest first, at most `limit`. */
    async due(now: number, limit: number): Promise<DueSimulatorEvent[]> {
      const rows = await db
        .selectFrom('simulator_events as s')
        .innerJoin('messages as m', 'm.id', 's.message_id')
        .select([
          's.id',
          's.message_id',
          's.org_id',
          's.recipient',
          's.type',
          's.bounce_type',
          's.status',
          's.reason',
          's.due_at',
          's.event_key',
          'm.status as message_status',
        ])
        .where('s.due_at', '<=', now)
        .orderBy('s.due_at')
        .orderBy('s.id')
        .limit(limit)
        .execute();
      return rows.map((r) => ({
        ...r,
        id: Number(r.id),
        due_at: Number(r.due_at),
        type: eventType(r.type),
      }));
    },

    async remove(ids: readonly number[]): Promise<void> {
      if (ids.length === 0) return;
      await db.deleteFrom('simulator_events').where('id', 'in', ids).execute();
    },
  };
}
