import * as Type from '@sinclair/typebox';
import type { ProviderDescriptor } from './descriptor.js';
import { Endpoint, ENDPOINT_LABEL, EndpointView } from './endpoint.js';
import { Masked, Secret } from './schema.js';

/** SendGrid's v3 mail send API; its event webhook is signed with ECDSA (a public key to verify). */
export const sendgrid = {
  name: 'sendgrid',
  title: 'SendGrid',
  kind: 'http',
  settings: {
    schema: Type.Object(
      {
        api_key: Secret('An API key with the mail.send scope'),
        endpoint: Endpoint,
      },
      { additionalProperties: false },
    ),
    view: Type.Object({ api_key: Masked, endpoint: EndpointView }),
    secrets: ['api_key'],
    destination: ['endpoint'],
    defaults: {},
    labels: { api_key: { label: 'API key (mail.send scope)' }, endpoint: ENDPOINT_LABEL },
  },
  events: {
    fields: {
      public_key: Type.String({
        minLength: 1,
        maxLength: 4000,
        description: 'sendgrid: the verification key as the console shows it (base64 DER) or PEM',
      }),
    },
    view: { public_key: Type.String() },
    required: ['public_key'],
    secrets: [],
    labels: { public_key: { label: 'Verification key', hint: 'As the console shows it (base64 DER) or PEM.' } },
    // `X-SMTPAPI` `unique_args` → top-level fields of each event.
    trackingHeaders: (messageId) => ({ 'X-SMTPAPI': JSON.stringify({ unique_args: { mailroom_message_id: messageId } }) }),
  },
} as const satisfies ProviderDescriptor;
