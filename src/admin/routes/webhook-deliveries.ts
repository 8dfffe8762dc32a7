import type { App, AppServices } from '../../http/app-types.js';
import { responses } from '../../http/schemas.js';
import { parseDeliveryId, type DeliveryFilter } from '../../storage/webhook-deliveries.js';
import {
  deliveryNotFound,
  instantOf,
  replayDeliveries,
  replayDelivery,
  replayRangeProblem,
  waitsForEnable,
  REPLAY_MAX_RANGE_DAYS,
} from '../webhook-deliveries.js';
import { requireEndpoint } from '../webhooks.js';
import {
  ADMIN_BODY_ERRORS,
  ADMIN_ERRORS,
  ADMIN_SECURITY,
  ADMIN_TAGS,
  invalidFields,
  OrgParams,
  requireOrganization,
} from './common.js';
import {
  Delivery,
  DeliveryParams,
  deliveryView,
  EndpointDeliveryParams,
  EndpointParams,
  LogPage,
  LogQuery,
  OrgLogQuery,
  Queued,
  RangeBody,
  type LogPage as Page,
  type OrgLogQuery as PageQuery,
} from './webhook-delivery-bodies.js';

/**
 * The delivery log and replays of outbound webhooks (issue 13): newest first, filtered by
 * endpoint, event type, message and outcome, paginated like GET /v1/history (an opaque cursor
 * naming the last delivery of the page). Replays keep the original `webhook-id` and body.
 * One delivery is reachable under the organization (…/webhooks/deliveries/{delivery_id}) and
 * under its endpoint (…/webhooks/{id}/deliveries/{delivery_id}: 404 when it is another's).
 */

const encodeCursor = (deliveryId: string): string => Buffer.from(deliveryId).toString('base64url');
function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (parseDeliveryId(id) === undefined)
    throw invalidFields([{ field: 'cursor', message: 'is not a cursor returned by this endpoint' }], 'query');
  return id;
}

/** `outcome` is `state` by the word: either, or both when they agree. */
function stateFilter(q: PageQuery): DeliveryFilter['state'] {
  if (q.state !== undefined && q.outcome !== undefined && q.state !== q.outcome) {
    throw invalidFields([{ field: 'outcome', message: 'is the same filter as state: give one, or both equal' }], 'query');
  }
  const s = q.state ?? q.outcome;
  return s === 'pending' || s === 'succeeded' || s === 'failed' ? s : undefined;
}

const LOG_ERRORS = [...ADMIN_BODY_ERRORS];
const REPLAY_ERRORS = [...ADMIN_ERRORS, 'conflict' as const];
const FILTERS =
  'Filters: `event_type`, `message_id`, `state` (pending, succeeded, failed; `outcome` is the same filter). ' +
  'Unknown parameters are refused. Pass `next_cursor` as `cursor` for the next page.';
const LOG_INTRO = 'Each delivery with its attempts (time, HTTP status, duration, the first 1 KB of the answer, error).';

export function registerWebhookDeliveryRoutes(app: App, { store }: AppServices): void {
  async function page(orgId: string, q: PageQuery): Promise<Page> {
    const filter: DeliveryFilter = {};
    if (q.endpoint !== undefined) filter.endpointId = q.endpoint;
    if (q.event_type !== undefined) filter.eventType = q.event_type;
    if (q.message_id !== undefined) filter.messageId = q.message_id;
    const state = stateFilter(q);
    if (state !== undefined) filter.state = state;
    if (q.cursor !== undefined) filter.before = decodeCursor(q.cursor);
    // One row more than the page tells whether another page exists.
    const rows = await store.webhookDeliveries.list(orgId, filter, q.limit + 1);
    const items = rows.slice(0, q.limit);
    const last = items[items.length - 1];
    return {
      items: items.map(deliveryView),
      next_cursor: rows.length > q.limit && last !== undefined ? encodeCursor(last.id) : null,
    };
  }

  async function one(orgId: string, deliveryId: string, endpointId?: string) {
    const found = await store.webhookDeliveries.get(orgId, deliveryId);
    if (found === undefined || (endpointId !== undefined && found.endpoint_id !== endpointId))
      throw deliveryNotFound(orgId, deliveryId, endpointId);
    return deliveryView(found);
  }

  async function replayOne(orgId: string, deliveryId: string, endpointId?: string) {
    const r = await replayDelivery(store, orgId, deliveryId, endpointId);
    return {
      queued: 1,
      endpoint_enabled: r.endpointEnabled,
      ...(r.endpointEnabled ? {} : { message: waitsForEnable(r.endpointId) }),
    };
  }

  app.get(
    '/organizations/:org/webhooks/:id/deliveries',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "A webhook endpoint's delivery log, newest first",
        description: `${LOG_INTRO} ${FILTERS}`,
        params: EndpointParams,
        querystring: LogQuery,
        response: responses({ 200: LogPage }, LOG_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const endpoint = await requireEndpoint(store, org.id, request.params.id);
      return page(org.id, { ...request.query, endpoint: endpoint.id });
    },
  );

  app.get(
    '/organizations/:org/webhooks/deliveries',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "The organization's webhook delivery log, every endpoint, newest first",
        description: `As …/webhooks/{id}/deliveries, with \`endpoint\` as one more filter. ${FILTERS}`,
        params: OrgParams,
        querystring: OrgLogQuery,
        response: responses({ 200: LogPage }, LOG_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      if (request.query.endpoint !== undefined) await requireEndpoint(store, org.id, request.query.endpoint);
      return page(org.id, request.query);
    },
  );

  app.get(
    '/organizations/:org/webhooks/deliveries/:delivery_id',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'One webhook delivery with its attempts',
        params: DeliveryParams,
        response: responses({ 200: Delivery }, ADMIN_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      return one(org.id, request.params.delivery_id);
    },
  );

  app.get(
    '/organizations/:org/webhooks/:id/deliveries/:delivery_id',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'One delivery of a webhook endpoint with its attempts',
        description: "As …/webhooks/deliveries/{delivery_id}; 404 when the delivery is not this endpoint's.",
        params: EndpointDeliveryParams,
        response: responses({ 200: Delivery }, ADMIN_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const endpoint = await requireEndpoint(store, org.id, request.params.id);
      return one(org.id, request.params.delivery_id, endpoint.id);
    },
  );

  const REPLAY_ONE =
    'Queues it now with a fresh retry schedule; the body and `webhook-id` are the original ones. ' +
    'A delivery being sent at this moment is left to finish: 409 `conflict`, nothing changed. ' +
    'An endpoint that is disabled gets nothing until it is enabled again: the answer says so (`endpoint_enabled: false`).';

  app.post(
    '/organizations/:org/webhooks/deliveries/:delivery_id/replay',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Send one webhook delivery again',
        description: REPLAY_ONE,
        params: DeliveryParams,
        response: responses({ 202: Queued }, REPLAY_ERRORS),
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      const answer = await replayOne(org.id, request.params.delivery_id);
      reply.code(202);
      return answer;
    },
  );

  app.post(
    '/organizations/:org/webhooks/:id/deliveries/:delivery_id/replay',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Send one delivery of a webhook endpoint again',
        description: `${REPLAY_ONE} 404 when the delivery is not this endpoint's.`,
        params: EndpointDeliveryParams,
        response: responses({ 202: Queued }, REPLAY_ERRORS),
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      const endpoint = await requireEndpoint(store, org.id, request.params.id);
      const answer = await replayOne(org.id, request.params.delivery_id, endpoint.id);
      reply.code(202);
      return answer;
    },
  );

  app.post(
    '/organizations/:org/webhooks/:id/replay',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Send again every event of a time range to a webhook endpoint',
        description:
          'Every message event that happened in [`since`, `until`) and that the endpoint subscribes to is queued again ' +
          "(events it never received, written while it was disabled, too), keeping each delivery's `webhook-id`. " +
          `The range spans at most ${REPLAY_MAX_RANGE_DAYS} days, and ` +
          `covers the events of messages created at most 7 days before \`since\`. ` +
          "A delivery created by the replay carries the message's current status. Deliveries being sent are left to finish. " +
          '`only_failed: true` queues only deliveries that failed.',
        params: EndpointParams,
        body: RangeBody,
        response: responses({ 202: Queued }, ADMIN_BODY_ERRORS),
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      const endpoint = await requireEndpoint(store, org.id, request.params.id);
      const since = instantOf(request.body.since);
      const until = instantOf(request.body.until);
      const real = 'must be an ISO 8601 date-time that names a real instant';
      if (since === undefined) throw invalidFields([{ field: 'since', message: real }]);
      if (until === undefined) throw invalidFields([{ field: 'until', message: real }]);
      const problem = replayRangeProblem(since, until);
      if (problem !== null) throw invalidFields([problem]);
      const queued = await replayDeliveries(store, org.id, endpoint.id, {
        since,
        until,
        onlyFailed: request.body.only_failed ?? false,
      });
      if (typeof queued !== 'number') throw invalidFields([queued]);
      reply.code(202);
      return {
        queued,
        endpoint_enabled: endpoint.enabled,
        ...(endpoint.enabled ? {} : { message: waitsForEnable(endpoint.id) }),
      };
    },
  );
}
