import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from '../../http/schemas.js';
import { iso, isoOrNull } from '../../http/time.js';
import { WEBHOOK_EVENT_TYPES, type WebhookDeliveryView } from '../../webhooks/types.js';
import { REPLAY_MAX_RANGE_DAYS } from '../webhook-deliveries.js';
import { LookupId } from './common.js';

/** Shapes of the webhook delivery log and replay routes (routes/webhook-deliveries.ts). */

const Attempt = Type.Object({
  attempt: Type.Integer(),
  at: Timestamp,
  status: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status; null when the receiver did not answer' }),
  duration_ms: Type.Integer(),
  response_body: Type.Union([Type.String(), Type.Null()], { description: 'The first 1 KB of the answer' }),
  error: Type.Union([Type.String(), Type.Null()]),
  request_headers: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()], {
    description:
      "The request's headers as sent (webhook-id, webhook-timestamp, webhook-signature…), custom header values masked; " +
      'null when nothing was sent or the attempt predates this log',
  }),
});

const STATES = ['pending', 'succeeded', 'failed'];

export const Delivery = Type.Object({
  id: Type.String({ description: 'whd_…' }),
  endpoint_id: Type.String(),
  event_type: Type.String(),
  message_id: Type.Union([Type.String(), Type.Null()]),
  webhook_id: Type.String({ description: 'The webhook-id header: the same on every attempt and replay' }),
  state: Type.String({ enum: STATES }),
  attempts: Type.Integer(),
  next_attempt_at: Type.Union([Timestamp, Type.Null()]),
  last_status: Type.Union([Type.Integer(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
  updated_at: Timestamp,
  request_body: Type.Union([Type.String(), Type.Null()], {
    description: 'The JSON body sent, fixed at the first attempt: every attempt and replay sends these bytes; null before it',
  }),
  log: Type.Array(Attempt),
});

const LogFilters = {
  event_type: Type.Optional(Type.String({ enum: [...WEBHOOK_EVENT_TYPES] })),
  message_id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,100}$' })),
  state: Type.Optional(Type.String({ enum: STATES })),
  outcome: Type.Optional(Type.String({ enum: STATES, description: "The same filter as `state`, by the issue's word" })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'next_cursor of the previous page' })),
};
/** Unknown parameters are refused: a misspelt filter silently ignored would show the whole log as if filtered. */
export const LogQuery = Type.Object(LogFilters, { additionalProperties: false });
export const OrgLogQuery = Type.Object({ ...LogFilters, endpoint: Type.Optional(LookupId) }, { additionalProperties: false });
export type OrgLogQuery = Static<typeof OrgLogQuery>;
export const LogPage = Type.Object({ items: Type.Array(Delivery), next_cursor: Type.Union([Type.String(), Type.Null()]) });
export type LogPage = Static<typeof LogPage>;

export const Queued = Type.Object({
  queued: Type.Integer({ description: 'Deliveries queued to be sent again (or for the first time)' }),
  endpoint_enabled: Type.Boolean({
    description: 'false: the endpoint is disabled, and what was queued waits until it is enabled again',
  }),
  message: Type.Optional(Type.String({ description: 'Said when the endpoint is disabled' })),
});

export const RangeBody = Type.Object(
  {
    since: Type.String({ format: 'date-time', description: 'Events that happened at or after this instant' }),
    until: Type.String({
      format: 'date-time',
      description: `… and before this one: at most ${REPLAY_MAX_RANGE_DAYS} days after since`,
    }),
    only_failed: Type.Optional(
      Type.Boolean({ description: 'Only deliveries that failed; default false: every event, including ones never delivered' }),
    ),
  },
  { additionalProperties: false },
);

export const EndpointParams = Type.Object({ org: LookupId, id: LookupId });
const DeliveryId = Type.String({ minLength: 1, maxLength: 64 });
export const DeliveryParams = Type.Object({ org: LookupId, delivery_id: DeliveryId });
export const EndpointDeliveryParams = Type.Object({ org: LookupId, id: LookupId, delivery_id: DeliveryId });

export function deliveryView(d: WebhookDeliveryView): Static<typeof Delivery> {
  return {
    ...d,
    next_attempt_at: isoOrNull(d.next_attempt_at),
    created_at: iso(d.created_at),
    updated_at: iso(d.updated_at),
    log: d.log.map((a) => ({ ...a, at: iso(a.at) })),
  };
}
