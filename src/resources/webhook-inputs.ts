import { type Static, Type } from '@sinclair/typebox';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/types.js';

/**
 * Input shapes of an outbound webhook endpoint, shared by the YAML config file (inputs.ts) and
 * the admin API's webhook bodies, so both accept the same fields.
 */

/** `[a-z0-9_-]`, 1..64, not `deliveries` (the log's path segment); src/admin/webhooks.ts applies the same rule. */
export const WebhookId = Type.String({
  pattern: '^(?!deliveries$)[a-z0-9][a-z0-9_-]{0,63}$',
  description: '1..64 of a-z 0-9 _ -, not "deliveries"',
});

/** `["*"]` (or left out) for every event; otherwise the types wanted. Unknown names are refused. */
export const WebhookEventsInput = Type.Array(Type.String({ enum: ['*', ...WEBHOOK_EVENT_TYPES] }), {
  minItems: 1,
  maxItems: 100,
  description: 'Event types to receive; ["*"] or left out: all of them',
});

/**
 * Custom request headers (issue 29): the limits in words (at most 10, token names, no reserved
 * name, values without line breaks, 1 KiB) are src/webhooks/custom-headers.ts's, so a 400 names
 * the header; the schema only bounds what is read.
 */
export const CustomHeadersInput = Type.Array(
  Type.Object(
    {
      name: Type.String({ maxLength: 200, description: 'An HTTP header name, e.g. Authorization' }),
      value: Type.String({
        maxLength: 4096,
        description: 'Write-only: reads show "********"; send that back to keep the stored value',
      }),
    },
    { additionalProperties: false },
  ),
  {
    maxItems: 100,
    description:
      'Headers sent with every request to this endpoint (at most 10), e.g. Authorization for a receiver behind basic auth. ' +
      'Not allowed: Host, Content-Length, Content-Type, Content-Encoding, Transfer-Encoding, Connection and the other ' +
      'hop-by-hop headers, Expect, User-Agent and the signing headers webhook-id, webhook-timestamp, webhook-signature.',
  },
);

/** The config file's form: the list, or a map of name to value (`Authorization: "Basic ${RECEIVER_AUTH}"`). */
export const CustomHeadersFileInput = Type.Union([
  CustomHeadersInput,
  Type.Record(Type.String(), Type.String({ maxLength: 4096 }), { description: 'name: value' }),
]);

/** An outbound webhook endpoint (issue 13). Its secret is never read back: only shown at creation and rotation. */
export const WebhookSettingsInput = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'http or https; in production https to a public address only',
    }),
    events: Type.Optional(WebhookEventsInput),
    enabled: Type.Optional(Type.Boolean({ description: 'Default true; enabling clears disabled_reason and the failure clock' })),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
    headers: Type.Optional(CustomHeadersInput),
  },
  { additionalProperties: false },
);
export type WebhookSettingsInput = Static<typeof WebhookSettingsInput>;

/** A signing secret someone brings: `whsec_` + padded standard base64 of at least 24 bytes (checked by isValidSecret). */
export const WebhookSecretInput = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'whsec_<base64 of at least 24 bytes>; generated when left out',
});

export const WebhookInput = Type.Composite(
  [
    Type.Object({
      id: WebhookId,
      secret: Type.Optional(WebhookSecretInput),
      headers: Type.Optional(CustomHeadersFileInput),
    }),
    Type.Omit(WebhookSettingsInput, ['headers']),
  ],
  { additionalProperties: false },
);
export type WebhookInput = Static<typeof WebhookInput>;
