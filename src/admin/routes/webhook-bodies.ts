import { Type, type Static, type TSchema } from '@sinclair/typebox';
import {
  CustomHeadersInput,
  WebhookEventsInput,
  WebhookId,
  WebhookSecretInput,
  WebhookSettingsInput,
} from '../../resources/webhook-inputs.js';
import { SECRET_MASK } from '../../providers/schema.js';
import { maskedHeaders } from '../../webhooks/custom-headers.js';
import { Timestamp } from '../../http/schemas.js';
import { iso, isoOrNull } from '../../http/time.js';
import { signingSecrets } from '../../webhooks/signing.js';
import type { WebhookEndpoint } from '../../webhooks/types.js';
import { MAX_SECRET_GRACE_SECONDS } from '../webhooks.js';
import { LookupId } from './common.js';

/** An endpoint's path: /organizations/{org}/webhooks/{id}. */
export const WebhookParams = Type.Object({ org: LookupId, id: LookupId });

/**
 * Shapes of the webhook endpoint routes (src/admin/routes/webhooks.ts). What GET shows is what
 * PUT takes; the secret is never shown on a read, only a hint of its last 4 characters.
 */

const Nullable = <T extends TSchema>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description === undefined ? {} : { description });

export const WebhookResource = Type.Object({
  id: Type.String(),
  url: Type.String(),
  description: Nullable(Type.String()),
  events: Type.Array(Type.String(), { description: '["*"]: every event type' }),
  enabled: Type.Boolean(),
  disabled_reason: Nullable(Type.String(), 'Why it was disabled: 410 Gone, failing for days, or an operator; null while enabled'),
  failing_since: Nullable(Timestamp, 'The first failure since the last success; null while healthy'),
  secret_hint: Type.String({ description: 'The last 4 characters of the signing secret' }),
  previous_secret_expires_at: Nullable(
    Timestamp,
    'While a rotation is in its grace: until when the old secret signs beside the new one; else null',
  ),
  headers: Type.Array(
    Type.Object({
      name: Type.String(),
      value: Type.String({ description: `Always "${SECRET_MASK}": the values are write-only` }),
    }),
    { description: 'Custom request headers sent with every request, values masked' },
  ),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type WebhookResource = Static<typeof WebhookResource>;

export const CreatedWebhookResource = Type.Composite([
  WebhookResource,
  Type.Object({
    secret: Type.String({ description: 'The signing secret whsec_…: shown this once (and at each rotation)' }),
  }),
]);

export function webhookResource(e: WebhookEndpoint, now: number): WebhookResource {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    events: e.events === '*' ? ['*'] : [...e.events],
    enabled: e.enabled,
    disabled_reason: e.disabled_reason,
    failing_since: isoOrNull(e.failing_since),
    secret_hint: `…${e.secret.slice(-4)}`,
    // Shown while the old secret still signs: the same rule the dispatcher signs by.
    previous_secret_expires_at: signingSecrets(e, now).length > 1 ? isoOrNull(e.previous_secret_expires_at) : null,
    headers: maskedHeaders(e.headers),
    created_at: iso(e.created_at),
    updated_at: iso(e.updated_at),
  };
}

export const WebhookCreate = Type.Composite(
  [
    Type.Object({
      id: Type.Optional(WebhookId),
      secret: Type.Optional(WebhookSecretInput),
    }),
    WebhookSettingsInput,
  ],
  { additionalProperties: false },
);

const ReadOnly = {
  id: Type.Optional(Type.String({ description: 'Read-only: ignored, but must match the URL when given' })),
  created_at: Type.Optional(Type.String({ description: 'Read-only: ignored' })),
  updated_at: Type.Optional(Type.String({ description: 'Read-only: ignored' })),
  secret_hint: Type.Optional(Type.String({ description: 'Read-only: ignored' })),
  disabled_reason: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Read-only: ignored' })),
  failing_since: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Read-only: ignored' })),
  previous_secret_expires_at: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Read-only: ignored' })),
};

/** `url`, `events` and `enabled` are required: leaving one out could widen what is sent where. */
export const WebhookPut = Type.Object(
  {
    url: WebhookSettingsInput.properties.url,
    events: WebhookEventsInput,
    enabled: Type.Boolean(),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
    headers: Type.Optional(CustomHeadersInput),
    secret: Type.Optional(
      Type.String({
        description: 'Used when the PUT creates the endpoint; otherwise it must be the stored one (rotate it at …/rotate-secret)',
      }),
    ),
    ...ReadOnly,
  },
  { additionalProperties: false },
);
export type WebhookPut = Static<typeof WebhookPut>;

export const WebhookPatch = Type.Partial(WebhookSettingsInput, { additionalProperties: false });

export const RotateSecretBody = Type.Object(
  {
    grace_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_SECRET_GRACE_SECONDS,
        description:
          'How long the old secret keeps signing beside the new one ' +
          '(default MAILROOM_WEBHOOK_SECRET_GRACE_SECONDS, 24 h); 0 stops it now',
      }),
    ),
  },
  { additionalProperties: false },
);

export const RotateSecretResult = Type.Object({
  secret: Type.String({ description: 'The new signing secret: shown this once' }),
  previous_secret_expires_at: Type.Union([Timestamp, Type.Null()], {
    description: 'Until when the old secret also signs; null: it stopped now',
  }),
});

export const TestResult = Type.Object({
  ok: Type.Boolean({ description: 'The receiver answered 2xx' }),
  status: Type.Union([Type.Integer(), Type.Null()], { description: 'Its HTTP status; null when it did not answer' }),
  duration_ms: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
  delivery_id: Type.String({ description: 'The test delivery in the log' }),
});
