import { Type, type Static } from '@sinclair/typebox';
import { ApiError } from '../../errors/api-error.js';
import type { App, AppServices } from '../../http/app-types.js';
import { responses, Timestamp } from '../../http/schemas.js';
import { iso, isoOrNull } from '../../http/time.js';
import type { Store } from '../../storage/store.js';
import { WEBHOOK_EVENT_TYPES, type WebhookDeliveryView } from '../../webhooks/types.js';
import { requireEndpoint } from '../webhooks.js';
import {
  ADMIN_BODY_ERRORS, ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, invalidFields, LookupId, OrgParams, requireOrganization,
} from './common.js';

/**
 * The delivery log and replays of outbound webhooks (issue 13): newest first, filtered by
 * endpoint, event type, message and outcome, paginated like GET /v1/history (an opaque cursor
 * naming the last delivery of the page). Replays keep the original `webhook-id` and body.
 */

const Attempt = Type.Object({
  attempt: Type.Integer(),
  at: Timestamp,
  status: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status; null when the receiver did not answer' }),
  duration_ms: Type.Integer(),
  response_body: Type.Union([Type.String(), Type.Null()], { description: 'The first 1 KB of the answer' }),
  error: Type.Union([Type.String(), Type.Null()]),
});

const Delivery = Type.Object({
  id: Type.String({ description: 'whd_…' }),
  endpoint_id: Type.String(),
  event_type: Type.String(),
  message_id: Type.Union([Type.String(), Type.Null()]),
  webhook_id: Type.String({ description: 'The webhook-id header: the same on every attempt and replay' }),
  state: Type.String({ enum: ['pending', 'succeeded', 'failed'] }),
  attempts: Type.Integer(),
  next_attempt_at: Type.Union([Timestamp, Type.Null()]),
  last_status: Type.Union([Type.Integer(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
  updated_at: Timestamp,
  log: Type.Array(Attempt),
});

const LogFilters = {
  event_type: Type.Optional(Type.String({ enum: [...WEBHOOK_EVENT_TYPES] })),
  message_id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,100}$' })),
  state: Type.Optional(Type.String({ enum: ['pending', 'succeeded', 'failed'] })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'next_cursor of the previous page' })),
};
const LogQuery = Type.Object(LogFilters);
const OrgLogQuery = Type.Object({ ...LogFilters, endpoint: Type.Optional(LookupId) });
const LogPage = Type.Object({ items: Type.Array(Delivery), next_cursor: Type.Union([Type.String(), Type.Null()]) });

const Queued = Type.Object({ queued: Type.Integer({ description: 'Deliveries queued to be sent again (or for the first time)' }) });
const RangeBody = Type.Object({
  since: Type.String({ format: 'date-time', description: 'Events that happened at or after this instant' }),
  until: Type.String({ format: 'date-time', description: '… and before this one' }),
  only_failed: Type.Optional(Type.Boolean({ description: 'Only deliveries that failed; default false: every event, including ones never delivered' })),
}, { additionalProperties: false });

const EndpointParams = Type.Object({ org: LookupId, id: LookupId });
const DeliveryParams = Type.Object({ org: LookupId, delivery_id: Type.String({ minLength: 1, maxLength: 64 }) });

function deliveryView(d: WebhookDeliveryView): Static<typeof Delivery> {
  return {
    ...d,
    next_attempt_at: isoOrNull(d.next_attempt_at),
    created_at: iso(d.created_at),
    updated_at: iso(d.updated_at),
    log: d.log.map((a) => ({ ...a, at: iso(a.at) })),
  };
}

const encodeCursor = (deliveryId: string): string => Buffer.from(deliveryId).toString('base64url');
function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^whd_[1-9]\d{0,15}$/.test(id)) throw invalidFields([{ field: 'cursor', message: 'is not a cursor returned by this endpoint' }]);
  return id;
}

type DeliveryFilter = Parameters<Store['webhookDeliveries']['list']>[1];

const deliveryNotFound = (org: string, id: string) =>
  new ApiError('not_found', { message: `Webhook delivery "${id}" does not exist in organization "${org}".` });

function instant(field: 'since' | 'until', value: string): number {
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) throw invalidFields([{ field, message: 'must be an ISO 8601 date-time that names a real instant' }]);
  return ms;
}

export function registerWebhookDeliveryRoutes(app: App, { store }: AppServices): void {
  async function page(orgId: string, q: Static<typeof OrgLogQuery>): Promise<Static<typeof LogPage>> {
    const filter: DeliveryFilter = {};
    if (q.endpoint !== undefined) filter.endpointId = q.endpoint;
    if (q.event_type !== undefined) filter.eventType = q.event_type;
    if (q.message_id !== undefined) filter.messageId = q.message_id;
    if (q.state === 'pending' || q.state === 'succeeded' || q.state === 'failed') filter.state = q.state;
    if (q.cursor !== undefined) filter.before = decodeCursor(q.cursor);
    // One row more than the page tells whether another page exists.
    const rows = await store.webhookDeliveries.list(orgId, filter, q.limit + 1);
    const items = rows.slice(0, q.limit);
    const last = items[items.length - 1];
    return { items: items.map(deliveryView), next_cursor: rows.length > q.limit && last !== undefined ? encodeCursor(last.id) : null };
  }

  app.get('/organizations/:org/webhooks/:id/deliveries', {
    schema: {
      tags: ADMIN_TAGS, security: ADMIN_SECURITY, summary: "A webhook endpoint's delivery log, newest first",
      description: 'Each delivery with its attempts (time, HTTP status, duration, the first 1 KB of the answer, error). '
        + 'Filters: `event_type`, `message_id`, `state` (pending, succeeded, failed). Pass `next_cursor` as `cursor` for the next page.',
      params: EndpointParams,
      querystring: LogQuery,
      response: responses({ 200: LogPage }, ADMIN_BODY_ERRORS),
    },
  }, async (request) => {
    const org = await requireOrganization(store, request.params.org);
    const endpoint = await requireEndpoint(store, org.id, request.params.id);
    return page(org.id, { ...request.query, endpoint: endpoint.id });
  });

  app.get('/organizations/:org/webhooks/deliveries', {
    schema: {
      tags: ADMIN_TAGS, security: ADMIN_SECURITY, summary: "The organization's webhook delivery log, every endpoint, newest first",
      description: 'As …/webhooks/{id}/deliveries, with `endpoint` as one more filter.',
      params: OrgParams,
      querystring: OrgLogQuery,
      response: responses({ 200: LogPage }, ADMIN_BODY_ERRORS),
    },
  }, async (request) => {
    const org = await requireOrganization(store, request.params.org);
    if (request.query.endpoint !== undefined) await requireEndpoint(store, org.id, request.query.endpoint);
    return page(org.id, request.query);
  });

  app.get('/organizations/:org/webhooks/deliveries/:delivery_id', {
    schema: {
      tags: ADMIN_TAGS, security: ADMIN_SECURITY, summary: 'One webhook delivery with its attempts',
      params: DeliveryParams,
      response: responses({ 200: Delivery }, ADMIN_ERRORS),
    },
  }, async (request) => {
    const org = await requireOrganization(store, request.params.org);
    const found = await store.webhookDeliveries.get(org.id, request.params.delivery_id);
    if (found === undefined) throw deliveryNotFound(org.id, request.params.delivery_id);
    return deliveryView(found);
  });

  app.post('/organizations/:org/webhooks/deliveries/:delivery_id/replay', {
    schema: {
      tags: ADMIN_TAGS, security: ADMIN_SECURITY, summary: 'Send one webhook delivery again',
      description: 'Queues it now with a fresh retry schedule; the body and `webhook-id` are the original ones. '
        + 'A delivery being sent at this moment is left to finish.',
      params: DeliveryParams,
      response: responses({ 202: Queued }, ADMIN_ERRORS),
    },
  }, async (request, reply) => {
    const org = await requireOrganization(store, request.params.org);
    if (!(await store.webhookDeliveries.replayOne(org.id, request.params.delivery_id, store.clock.now()))) {
      throw deliveryNotFound(org.id, request.params.delivery_id);
    }
    reply.code(202);
    return { queued: 1 };
  });

  app.post('/organizations/:org/webhooks/:id/replay', {
    schema: {
      tags: ADMIN_TAGS, security: ADMIN_SECURITY, summary: "Send again every event of a time range to a webhook endpoint",
      description: 'Every message event that happened in [`since`, `until`) and that the endpoint subscribes to is queued again '
        + '(events it never received, written while it was disabled, too), keeping each delivery\'s `webhook-id`. '
        + '`only_failed: true` queues only deliveries that failed.',
      params: EndpointParams,
      body: RangeBody,
      response: responses({ 202: Queued }, ADMIN_BODY_ERRORS),
    },
  }, async (request, reply) => {
    const org = await requireOrganization(store, request.params.org);
    const endpoint = await requireEndpoint(store, org.id, request.params.id);
    const since = instant('since', request.body.since);
    const until = instant('until', request.body.until);
    if (until <= since) throw invalidFields([{ field: 'until', message: 'must be after since' }]);
    const queued = await store.webhookDeliveries.replayRange(
      org.id, endpoint.id, { since, until, onlyFailed: request.body.only_failed ?? false }, store.clock.now(),
    );
    reply.code(202);
    return { queued };
  });
}
