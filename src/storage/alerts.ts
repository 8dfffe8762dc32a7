import type { StatusCounts } from '../domain/rates.js';
import { sql, type Kysely } from 'kysely';
import {
  DEFAULT_ALERT_SETTINGS,
  type AlertDetail,
  type AlertEvent,
  type AlertKind,
  type AlertSettings,
  type AlertState,
  type OpenAlert,
} from '../domain/alerts.js';
import { alertEventPayload } from '../webhooks/alert-payload.js';
import { bool, int, parseJson } from './json.js';
import type { Database } from './schema.js';

/**
 * Alerts' storage (issue 29; migration 0022). `fire` and `resolve` are the only writers of alert
 * state and events: each is a compare-and-set on the state row (insert-if-absent, delete
 * returning), so however many workers see a crossing at once, one of them writes the event and
 * its webhook deliveries, in the caller's transaction.
 */

/** Messages the rates count: handed off to a service (what SES calls sent). */
const HANDED_OFF = ['sent', 'delivered', 'bounced', 'complained'] as const;

/** Live messages created in the window and handed off, by status (src/domain/rates.ts reads them). */
export type WindowCounts = StatusCounts;

type EventRow = {
  id: number | string;
  org_id: string;
  kind: string;
  subject: string;
  state: string;
  at: number | string;
  detail: string;
};

const eventOf = (r: EventRow): AlertEvent => ({
  id: Number(r.id),
  org_id: r.org_id,
  kind: r.kind as AlertKind,
  subject: r.subject,
  state: r.state as AlertState,
  at: Number(r.at),
  detail: parseJson<AlertDetail>(r.detail, `alert_events.detail of ${r.id}`),
});

export function alertsRepo(db: Kysely<Database>) {
  /**
   * Writes the event and, for each enabled endpoint of the organization subscribed to
   * `alert.<kind>` (or to every event), a pending delivery with its body fixed now. An endpoint
   * an `endpoint_disabled` alert is about is left out by name (it is disabled anyway; enabled
   * again, it gets the `resolved` one).
   */
  async function record(orgId: string, kind: AlertKind, subject: string, state: AlertState, detail: AlertDetail, now: number) {
    const row = await db
      .insertInto('alert_events')
      .values({ org_id: orgId, kind, subject, state, at: now, detail: JSON.stringify(detail) })
      .returning('id')
      .executeTakeFirstOrThrow();
    const id = Number(row.id);
    const type = `alert.${kind}`;
    const payload = alertEventPayload({ id, orgId, kind, state, at: now, detail });
    let endpoints = db
      .selectFrom('webhook_endpoints as w')
      .select([
        'w.org_id',
        'w.id',
        sql<number>`${-id}`.as('event_id'),
        sql<string>`${type}`.as('event_type'),
        sql<string>`${payload}`.as('payload'),
        sql<string>`'pending'`.as('state'),
        sql<number>`0`.as('attempts'),
        sql<number>`${now}`.as('next_attempt_at'),
        sql<number>`${now}`.as('created_at'),
        sql<number>`${now}`.as('updated_at'),
      ])
      .where('w.org_id', '=', orgId)
      .where('w.enabled', '=', 1)
      .where((eb) => eb.or([eb('w.events', '=', '*'), eb('w.events', 'like', `%,${type},%`)]));
    if (kind === 'endpoint_disabled' && state === 'firing') endpoints = endpoints.where('w.id', '<>', subject);
    await db
      .insertInto('webhook_deliveries')
      .columns([
        'org_id',
        'endpoint_id',
        'event_id',
        'event_type',
        'payload',
        'state',
        'attempts',
        'next_attempt_at',
        'created_at',
        'updated_at',
      ])
      .expression(endpoints)
      .execute();
    return { id, org_id: orgId, kind, subject, state, at: now, detail } satisfies AlertEvent;
  }

  return {
    /** The organization's settings; the defaults when it never set any. */
    async settings(orgId: string): Promise<AlertSettings> {
      const r = await db.selectFrom('alert_settings').selectAll().where('org_id', '=', orgId).executeTakeFirst();
      return r === undefined ? { ...DEFAULT_ALERT_SETTINGS } : settingsOf(r);
    },

    async putSettings(orgId: string, s: AlertSettings, now: number): Promise<void> {
      const row = {
        bounce_rate_percent: s.bounce_rate_percent,
        complaint_rate_percent: s.complaint_rate_percent,
        min_sample: s.min_sample,
        window_hours: s.window_hours,
        breaker_open: int(s.breaker_open),
        endpoint_disabled: int(s.endpoint_disabled),
        updated_at: now,
      };
      await db
        .insertInto('alert_settings')
        .values({ org_id: orgId, ...row })
        .onConflict((oc) => oc.column('org_id').doUpdateSet(row))
        .execute();
    },

    /** Every organization with its settings (the periodic check's list: organizations are few, settings fewer). */
    async everyOrganization(): Promise<Array<{ org_id: string; settings: AlertSettings }>> {
      const [orgs, rows] = await Promise.all([
        db.selectFrom('organizations').select('id').orderBy('id').execute(),
        db.selectFrom('alert_settings').selectAll().execute(),
      ]);
      const set = new Map(rows.map((r) => [r.org_id, settingsOf(r)]));
      return orgs.map((o) => ({ org_id: o.id, settings: set.get(o.id) ?? { ...DEFAULT_ALERT_SETTINGS } }));
    },

    /**
     * Live messages created since `since`, handed off, and how many of them bounced or were
     * complained about. All − test, as the overview counts: the covering index
     * messages_org_status_time per status, then messages_test (test rows only).
     */
    async windowCounts(orgId: string, since: number): Promise<WindowCounts> {
      const count = async (testOnly: boolean) => {
        let q = db
          .selectFrom('messages')
          .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
          .where('org_id', '=', orgId)
          .where('created_at', '>=', since);
        q = testOnly ? q.where(sql<boolean>`mode = 'test'`) : q.where('status', 'in', HANDED_OFF);
        const rows = await q.groupBy('status').execute();
        return new Map(rows.map((r) => [r.status, Number(r.n)]));
      };
      const all = await count(false);
      const test = await count(true);
      const live: Partial<Record<(typeof HANDED_OFF)[number], number>> = {};
      for (const status of HANDED_OFF) live[status] = (all.get(status) ?? 0) - (test.get(status) ?? 0);
      return live;
    },

    /** Fires the alert unless it is firing already: the event written, or undefined. Call it in a transaction. */
    async fire(orgId: string, kind: AlertKind, subject: string, detail: AlertDetail, now: number) {
      const took = await db
        .insertInto('alert_states')
        .values({ org_id: orgId, kind, subject, since: now, event_id: 0, detail: JSON.stringify(detail) })
        .onConflict((oc) => oc.columns(['org_id', 'kind', 'subject']).doNothing())
        .returning('org_id')
        .executeTakeFirst();
      if (took === undefined) return undefined;
      const event = await record(orgId, kind, subject, 'firing', detail, now);
      await db
        .updateTable('alert_states')
        .set({ event_id: event.id })
        .where('org_id', '=', orgId)
        .where('kind', '=', kind)
        .where('subject', '=', subject)
        .execute();
      return event;
    },

    /** Resolves the alert if it is firing: the event written, or undefined. Call it in a transaction. */
    async resolve(orgId: string, kind: AlertKind, subject: string, detail: AlertDetail, now: number) {
      const gone = await db
        .deleteFrom('alert_states')
        .where('org_id', '=', orgId)
        .where('kind', '=', kind)
        .where('subject', '=', subject)
        .returning('org_id')
        .executeTakeFirst();
      if (gone === undefined) return undefined;
      return record(orgId, kind, subject, 'resolved', detail, now);
    },

    /** The organization's alerts firing now, oldest first (its rows of the primary key). */
    async open(orgId: string): Promise<OpenAlert[]> {
      const rows = await db.selectFrom('alert_states').selectAll().where('org_id', '=', orgId).orderBy('since').execute();
      return rows.map((r) => ({
        org_id: r.org_id,
        kind: r.kind as AlertKind,
        subject: r.subject,
        since: Number(r.since),
        event_id: Number(r.event_id),
        detail: parseJson<AlertDetail>(r.detail, `alert_states.detail of ${r.org_id}/${r.kind}`),
      }));
    },

    /** Every firing alert of a kind (the check's sweep of endpoint_disabled; firing alerts are few). */
    async firingOfKind(kind: AlertKind): Promise<Array<{ org_id: string; subject: string }>> {
      return db.selectFrom('alert_states').select(['org_id', 'subject']).where('kind', '=', kind).execute();
    },

    /** The organization's latest alert events, newest first (alert_events_org_time, read backwards). */
    async events(orgId: string, limit: number): Promise<AlertEvent[]> {
      const rows = await db
        .selectFrom('alert_events')
        .selectAll()
        .where('org_id', '=', orgId)
        .orderBy('at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.map(eventOf);
    },

    /** Alert events older than `before`, `limit` at a time (retention); how many went. */
    async purgeBefore(before: number, limit: number): Promise<number> {
      const old = await db.selectFrom('alert_events').select('id').where('at', '<', before).limit(limit).execute();
      if (old.length === 0) return 0;
      await db
        .deleteFrom('alert_events')
        .where(
          'id',
          'in',
          old.map((o) => Number(o.id)),
        )
        .execute();
      return old.length;
    },
  };
}

function settingsOf(r: {
  bounce_rate_percent: number | null;
  complaint_rate_percent: number | null;
  min_sample: number;
  window_hours: number;
  breaker_open: number;
  endpoint_disabled: number;
}): AlertSettings {
  return {
    bounce_rate_percent: r.bounce_rate_percent === null ? null : Number(r.bounce_rate_percent),
    complaint_rate_percent: r.complaint_rate_percent === null ? null : Number(r.complaint_rate_percent),
    min_sample: Number(r.min_sample),
    window_hours: Number(r.window_hours),
    breaker_open: bool(Number(r.breaker_open)),
    endpoint_disabled: bool(Number(r.endpoint_disabled)),
  };
}
