import { Type, type Static } from '@sinclair/typebox';
import { ALERT_KINDS, type AlertDetail, type AlertEvent, type AlertSettings, type OpenAlert } from '../../domain/alerts.js';
import type { App, AppServices } from '../../http/app-types.js';
import { responses, Timestamp } from '../../http/schemas.js';
import { iso } from '../../http/time.js';
import { AlertSettingsInput, alertSettingsOf } from '../../resources/alert-inputs.js';
import { alertIdOf } from '../../webhooks/alert-payload.js';
import { ADMIN_BODY_ERRORS, ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, OrgParams, requireOrganization } from './common.js';

/**
 * An organization's alerts (issue 29): GET/PUT /admin/v1/organizations/{org}/alerts (settings)
 * and GET …/alerts/events (what fires now and what fired lately, for the overview).
 */

const Percent = Type.Union([Type.Number(), Type.Null()]);

export const AlertSettingsResource = Type.Object({
  bounce_rate_percent: Percent,
  complaint_rate_percent: Percent,
  min_sample: Type.Integer(),
  window_hours: Type.Integer(),
  breaker_open: Type.Boolean(),
  endpoint_disabled: Type.Boolean(),
});

const Kind = Type.String({ enum: [...ALERT_KINDS] });
const Details = {
  service_id: Type.Optional(Type.String()),
  endpoint_id: Type.Optional(Type.String()),
  reason: Type.Optional(Type.String()),
  rate: Type.Optional(
    Type.Object({
      percent: Type.Number(),
      threshold_percent: Type.Number(),
      count: Type.Integer(),
      sample: Type.Integer(),
      window_hours: Type.Integer(),
    }),
  ),
};

export const OpenAlertItem = Type.Object({
  alert_id: Type.String({ description: 'The firing event: `alrt_<n>`, the `data.alert_id` of its webhook' }),
  kind: Kind,
  since: Timestamp,
  ...Details,
});

export const AlertEventItem = Type.Object({
  alert_id: Type.String(),
  kind: Kind,
  state: Type.Union([Type.Literal('firing'), Type.Literal('resolved')]),
  at: Timestamp,
  ...Details,
});

export const AlertEventsPage = Type.Object({
  open: Type.Array(OpenAlertItem, { description: 'Alerts firing now, oldest first' }),
  items: Type.Array(AlertEventItem, { description: 'The latest alert events, newest first' }),
});

const EventsQuery = Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }) });

/** The detail's known fields only: a row written by a later version shows what this one knows. */
function details(d: AlertDetail): AlertDetail {
  return {
    ...(d.service_id !== undefined && { service_id: d.service_id }),
    ...(d.endpoint_id !== undefined && { endpoint_id: d.endpoint_id }),
    ...(d.reason !== undefined && { reason: d.reason }),
    ...(d.rate !== undefined && { rate: d.rate }),
  };
}

const openItem = (a: OpenAlert): Static<typeof OpenAlertItem> => ({
  alert_id: alertIdOf(a.event_id),
  kind: a.kind,
  since: iso(a.since),
  ...details(a.detail),
});

const eventItem = (e: AlertEvent): Static<typeof AlertEventItem> => ({
  alert_id: alertIdOf(e.id),
  kind: e.kind,
  state: e.state,
  at: iso(e.at),
  ...details(e.detail),
});

const settingsResource = (s: AlertSettings): Static<typeof AlertSettingsResource> => ({ ...s });

export function registerAlertRoutes(app: App, { store, clock }: AppServices): void {
  app.get(
    '/organizations/:org/alerts',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "An organization's alert settings (the defaults until it sets its own)",
        params: OrgParams,
        response: responses({ 200: AlertSettingsResource }, ADMIN_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      return settingsResource(await store.alerts.settings(org.id));
    },
  );

  app.put(
    '/organizations/:org/alerts',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "Replace an organization's alert settings",
        description:
          'Every field is optional: one left out takes its default (bounce 5 %, complaint 0.1 %, min_sample 100, ' +
          'window_hours 24, breaker_open and endpoint_disabled true). A rate threshold of null turns that alert off; ' +
          'a firing one resolves at the next check (within a minute).',
        params: OrgParams,
        body: AlertSettingsInput,
        response: responses({ 200: AlertSettingsResource }, ADMIN_BODY_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const settings = alertSettingsOf(request.body);
      await store.transaction((tx) => tx.alerts.putSettings(org.id, settings, clock.now()));
      return settingsResource(settings);
    },
  );

  app.get(
    '/organizations/:org/alerts/events',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "An organization's alerts firing now and its latest alert events",
        description:
          'Each alert fires once when it crosses its threshold and resolves once when it is back under; both are ' +
          'also sent as the webhook event `alert.<kind>`. Events are kept as long as messages (MAILROOM_RETENTION_DAYS).',
        params: OrgParams,
        querystring: EventsQuery,
        response: responses({ 200: AlertEventsPage }, [...ADMIN_ERRORS, 'invalid_body']),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const [open, events] = await Promise.all([store.alerts.open(org.id), store.alerts.events(org.id, request.query.limit)]);
      return { open: open.map(openItem), items: events.map(eventItem) };
    },
  );
}
