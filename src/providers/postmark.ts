import * as Type from '@sinclair/typebox';
import type { ProviderDescriptor } from './descriptor.js';
import { Endpoint, ENDPOINT_LABEL, EndpointView } from './endpoint.js';
import { Masked, maskedNamed, Secret } from './schema.js';

/** Postmark's HTTP API; its webhooks authenticate with HTTP Basic credentials put in the URL. */
export const postmark = {
  name: 'postmark',
  title: 'Postmark',
  kind: 'http',
  settings: {
    schema: Type.Object(
      {
        server_token: Secret('The Server API token (X-Postmark-Server-Token)'),
        message_stream: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,100}$', description: 'Default outbound' })),
        endpoint: Endpoint,
      },
      { additionalProperties: false },
    ),
    view: Type.Object({ server_token: Masked, message_stream: Type.String(), endpoint: EndpointView }),
    secrets: ['server_token'],
    destination: ['endpoint'],
    defaults: { message_stream: 'outbound' },
    labels: {
      server_token: { label: 'Server API token' },
      message_stream: { label: 'Message stream', hint: 'Default outbound.' },
      endpoint: ENDPOINT_LABEL,
    },
  },
  events: {
    fields: {
      username: Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'postmark: HTTP Basic user name put in the webhook URL',
      }),
      password: Type.String({ minLength: 1, maxLength: 200, description: 'postmark: HTTP Basic password (write-only)' }),
    },
    view: { username: Type.String(), password: maskedNamed('password') },
    required: ['username', 'password'],
    secrets: ['password'],
    labels: { username: { label: 'Webhook user name' }, password: { label: 'Webhook password' } },
    // `X-PM-Metadata-<key>` → the webhook's `Metadata`.
    trackingHeaders: (messageId) => ({ 'X-PM-Metadata-mailroom_message_id': messageId }),
  },
} as const satisfies ProviderDescriptor;
