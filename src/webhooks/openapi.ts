import { Type, type TSchema } from '@sinclair/typebox';
import { TIMELINE_EVENT_MEANINGS, TIMELINE_EVENT_TYPES } from '../domain/timeline.js';
import { EVENT_SOURCES } from '../domain/event-sources.js';
import { WEBHOOK_EVENT_TYPES } from './types.js';
import { ALERT_EVENT_TYPES, ALERT_KINDS } from '../domain/alerts.js';
import { TemplateIdSchema } from '../domain/template-id.js';

/**
 * The OpenAPI 3.1 `webhooks` object (issue 13): one entry per event type, each a POST the
 * customer's endpoint receives, with the body built by src/webhooks/payload.ts and the three
 * Standard Webhooks headers. The bodies are components (`WebhookMessageEvent`, `WebhookTest`)
 * so 40-odd entries share one definition.
 */

const MessageEventData = Type.Object({
  message_id: Type.String(),
  organization_id: Type.String(),
  template_id: TemplateIdSchema,
  service_id: Type.String(),
  status: Type.String({
    description:
      "The message's status as this event left it; a delivery created later by a " +
      "range replay (an event the endpoint never got) carries the message's current status",
  }),
  sequence: Type.Integer({
    minimum: 1,
    description:
      "The event's rank in its message's timeline (1, 2, …): a receiver that already " +
      'has a higher one for the message may ignore a lower one that arrives late',
  }),
  mode: Type.Union([Type.Literal('live'), Type.Literal('test')], {
    description: 'live, or test for a message sent with a test key: the same endpoints get both, told apart by this field',
  }),
  recipient: Type.Optional(Type.String({ description: 'The address the event is about, when it is about one' })),
  bounce_type: Type.Optional(Type.String({ description: 'Bounces reported after hand-off: hard or soft' })),
  reason: Type.Optional(Type.String({ description: "Why: the remote's reply or diagnostic, or mailroom's reason" })),
  provider: Type.Optional(
    Type.String({
      description: `Events after hand-off: where the event came from (${EVENT_SOURCES.join(', ')})`,
    }),
  ),
  details: Type.Optional(
    Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          "The event's other fields (attempt of message.sending, retry_at of message.deferred, response and recipients " +
          "of message.sent, a provider's remote status, …); absent when there are none. `simulated: true` on every event " +
          'of a message sent to a simulator address (nothing was delivered to anyone)',
      },
    ),
  ),
});

const messageTypes = TIMELINE_EVENT_TYPES.map((t) => `message.${t}`);

const AlertEventData = Type.Object({
  alert_id: Type.String({ description: '`alrt_<n>`: each firing and each resolution has its own' }),
  organization_id: Type.String(),
  kind: Type.String({ enum: [...ALERT_KINDS] }),
  state: Type.Union([Type.Literal('firing'), Type.Literal('resolved')], {
    description: 'firing: it crossed its threshold (sent once per crossing); resolved: back under',
  }),
  rate: Type.Optional(
    Type.Object(
      {
        percent: Type.Number(),
        threshold_percent: Type.Number(),
        count: Type.Integer({ description: 'Bounced (or complained-about) messages in the window' }),
        sample: Type.Integer({ description: 'Live messages handed off in the window (sent, delivered, bounced, complained)' }),
        window_hours: Type.Integer(),
      },
      { description: 'bounce_rate and complaint_rate: what was measured' },
    ),
  ),
  service_id: Type.Optional(Type.String({ description: 'breaker_open: the service' })),
  endpoint_id: Type.Optional(Type.String({ description: 'endpoint_disabled: the endpoint that was disabled' })),
  reason: Type.Optional(Type.String({ description: "The service's last error, or why the endpoint was disabled" })),
});

const ALERT_MEANINGS: Record<string, string> = {
  'alert.bounce_rate': "The organization's bounce rate over its window crossed its threshold (or came back under it).",
  'alert.complaint_rate': "The organization's complaint rate over its window crossed its threshold (or came back under it).",
  'alert.breaker_open': "A service's circuit breaker opened (or closed again): its messages fail over or wait.",
  'alert.endpoint_disabled':
    "A webhook endpoint was disabled after failing (or enabled again). Sent to the organization's OTHER enabled " +
    'endpoints subscribed to it: the disabled one gets nothing while it is disabled.',
};

function schemaOf(type: string): string {
  if (type === 'webhook.test') return 'WebhookTest';
  return type.startsWith('alert.') ? 'WebhookAlertEvent' : 'WebhookMessageEvent';
}

export const WEBHOOK_COMPONENT_SCHEMAS: Record<string, TSchema> = {
  WebhookMessageEvent: Type.Object(
    {
      type: Type.String({ enum: messageTypes }),
      timestamp: Type.String({ format: 'date-time', description: 'When the event happened (not when it was sent to you)' }),
      data: MessageEventData,
    },
    { description: 'A message event: the same body on every attempt and replay' },
  ),
  WebhookAlertEvent: Type.Object(
    {
      type: Type.String({ enum: [...ALERT_EVENT_TYPES] }),
      timestamp: Type.String({ format: 'date-time', description: 'When the alert fired or resolved' }),
      data: AlertEventData,
    },
    { description: 'An alert of the organization (issue 29): fired on crossing, resolved when back under' },
  ),
  WebhookTest: Type.Object(
    {
      type: Type.String({ enum: ['webhook.test'] }),
      timestamp: Type.String({ format: 'date-time' }),
      data: Type.Object({ organization_id: Type.String(), endpoint_id: Type.String() }),
    },
    { description: 'Sent by POST /admin/v1/organizations/{org}/webhooks/{id}/test' },
  ),
};

const HEADERS = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    schema: { type: 'string' },
    description:
      'Unique per event: the same at every endpoint that gets the event, on every ' +
      'retry and on every replay, so deduplicate on it (each webhook.test has its own)',
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    schema: { type: 'string', pattern: '^\\d+$' },
    description: 'Unix seconds of this attempt; refuse ones far from your clock (standardwebhooks allows 5 minutes)',
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    schema: { type: 'string' },
    description:
      'Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, ' +
      'keyed with the base64-decoded part of the endpoint secret after `whsec_`. During the grace ' +
      'after a secret rotation it carries two, one per secret: accept the request when either verifies.',
  },
] as const;

const RESPONSES = {
  '2XX': { description: 'Received: any 2xx ends the delivery (the body is kept, first 1 KB, in the delivery log)' },
  410: { description: 'Gone: the endpoint is disabled at once (re-enable it with PATCH {"enabled": true})' },
  default: {
    description:
      'Anything else, a redirect (never followed), a timeout (15 s) or no answer: retried after ' +
      '5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (MAILROOM_WEBHOOK_RETRY_SCHEDULE), then failed',
  },
} as const;

function meaning(type: string): string {
  if (type === 'webhook.test') return 'A test event, sent on request to check the endpoint and its signature check.';
  const alert = ALERT_MEANINGS[type];
  if (alert !== undefined) return alert;
  const t = TIMELINE_EVENT_TYPES.find((x) => `message.${x}` === type);
  return t === undefined ? type : TIMELINE_EVENT_MEANINGS[t];
}

/** `webhooks` of the OpenAPI document: `message.delivered`, `message.bounced`, …, `alert.*`, `webhook.test`. */
export function webhookDocs() {
  return Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          summary: type,
          description:
            `${meaning(type)}\n\nPosted as JSON to each enabled endpoint subscribed to ` +
            `\`${type}\` (or to every event), signed with the Standard Webhooks scheme.`,
          operationId: `webhook_${type.replace('.', '_')}`,
          tags: ['webhooks'],
          parameters: [...HEADERS],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: { $ref: `#/components/schemas/${schemaOf(type)}` },
              },
            },
          },
          responses: RESPONSES,
        },
      },
    ]),
  );
}
