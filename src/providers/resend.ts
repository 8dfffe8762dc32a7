import * as Type from '@sinclair/typebox';
import type { ProviderDescriptor } from './descriptor.js';
import { Endpoint, ENDPOINT_LABEL, EndpointView } from './endpoint.js';
import { Masked, maskedNamed, Secret } from './schema.js';

/**
 * Resend's HTTP API; its webhooks are signed Standard Webhooks style (whsec_…). Resend reads no
 * metadata header: its events match by the id in its answer (or its SMTP 250 reply) or by our
 * Message-ID, so it has no tracking header.
 */
export const resend = {
  name: 'resend',
  title: 'Resend',
  kind: 'http',
  settings: {
    schema: Type.Object(
      {
        api_key: Secret('An API key (re_…) allowed to send'),
        endpoint: Endpoint,
      },
      { additionalProperties: false },
    ),
    view: Type.Object({ api_key: Masked, endpoint: EndpointView }),
    secrets: ['api_key'],
    destination: ['endpoint'],
    defaults: {},
    labels: { api_key: { label: 'API key (re_…)' }, endpoint: ENDPOINT_LABEL },
  },
  events: {
    fields: {
      secret: Type.String({
        pattern: '^(whsec_[A-Za-z0-9+/=]{8,}|\\*{8})$',
        description: 'resend: the webhook signing secret whsec_… (write-only; "********" keeps the stored one)',
      }),
    },
    view: { secret: maskedNamed('secret') },
    required: ['secret'],
    secrets: ['secret'],
    labels: { secret: { label: 'Signing secret (whsec_…)' } },
  },
} as const satisfies ProviderDescriptor;
