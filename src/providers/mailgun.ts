import * as Type from '@sinclair/typebox';
import type { ProviderDescriptor } from './descriptor.js';
import { Endpoint, ENDPOINT_LABEL, EndpointView } from './endpoint.js';
import { literals, Masked, maskedNamed, Secret } from './schema.js';

/** Mailgun's messages API (US or EU region); its webhooks are signed with an HMAC key. */
export const mailgun = {
  name: 'mailgun',
  title: 'Mailgun',
  kind: 'http',
  settings: {
    schema: Type.Object(
      {
        domain: Type.String({
          pattern: '^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$',
          description: 'The sending domain as Mailgun lists it',
        }),
        api_key: Secret('The private API key'),
        region: Type.Optional(literals(['us', 'eu'] as const)),
        endpoint: Endpoint,
      },
      { additionalProperties: false },
    ),
    view: Type.Object({ domain: Type.String(), api_key: Masked, region: Type.String(), endpoint: EndpointView }),
    secrets: ['api_key'],
    destination: ['endpoint', 'region', 'domain'],
    defaults: { region: 'us' },
    labels: {
      domain: { label: 'Sending domain' },
      api_key: { label: 'Private API key' },
      region: { label: 'Region', options: { us: 'US (api.mailgun.net)', eu: 'EU (api.eu.mailgun.net)' } },
      endpoint: ENDPOINT_LABEL,
    },
  },
  events: {
    fields: {
      signing_key: Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'mailgun: the HTTP webhook signing key (write-only)',
      }),
    },
    view: { signing_key: maskedNamed('signing key') },
    required: ['signing_key'],
    secrets: ['signing_key'],
    labels: { signing_key: { label: 'Webhook signing key' } },
    // `X-Mailgun-Variables` (JSON) → `user-variables`.
    trackingHeaders: (messageId) => ({ 'X-Mailgun-Variables': JSON.stringify({ mailroom_message_id: messageId }) }),
  },
} as const satisfies ProviderDescriptor;
