import * as Type from '@sinclair/typebox';
import type { ProviderDescriptor } from './descriptor.js';
import { Endpoint, ENDPOINT_LABEL, EndpointView } from './endpoint.js';
import { Masked, Secret } from './schema.js';

/** Amazon SES v2 over the AWS SDK; its events come through SNS. */
export const ses = {
  name: 'ses',
  title: 'SES',
  kind: 'http',
  settings: {
    // No keys: the SDK's default chain (environment, profile, instance role).
    schema: Type.Object(
      {
        region: Type.String({ pattern: '^[a-z]{2}(-[a-z]+)+-\\d{1,2}$', description: 'e.g. eu-west-1' }),
        access_key_id: Type.Optional(
          Type.String({ pattern: '^[A-Za-z0-9]{1,128}$', description: 'With secret_access_key, or neither (the default chain)' }),
        ),
        secret_access_key: Type.Optional(Secret('The secret of access_key_id')),
        configuration_set: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })),
        endpoint: Endpoint,
      },
      { additionalProperties: false },
    ),
    view: Type.Object({
      region: Type.String(),
      access_key_id: Type.Optional(Type.String()),
      secret_access_key: Type.Optional(Masked),
      configuration_set: Type.Optional(Type.String()),
      endpoint: EndpointView,
    }),
    secrets: ['secret_access_key'],
    destination: ['endpoint', 'region', 'access_key_id'],
    defaults: {},
    problems: (block) => {
      if ((block.access_key_id === undefined) === (block.secret_access_key === undefined)) return [];
      const missing = block.access_key_id === undefined ? 'access_key_id' : 'secret_access_key';
      return [
        {
          field: missing,
          message: "is required with the other key (give both, or neither for the AWS SDK's default credential chain)",
        },
      ];
    },
    labels: {
      region: { label: 'Region', hint: 'e.g. eu-west-1' },
      access_key_id: { label: 'Access key id', hint: 'With the secret, or neither (the AWS default credential chain).' },
      secret_access_key: { label: 'Secret access key' },
      configuration_set: { label: 'Configuration set' },
      endpoint: ENDPOINT_LABEL,
    },
  },
  events: {
    fields: {
      topic_arns: Type.Array(Type.String({ pattern: '^arn:aws[a-z-]*:sns:[a-z0-9-]+:\\d{12}:[A-Za-z0-9_-]{1,256}$' }), {
        description: 'ses: the SNS topics events may come from; none: any topic',
      }),
    },
    view: { topic_arns: Type.Array(Type.String()) },
    required: [],
    secrets: [],
    labels: { topic_arns: { label: 'SNS topic ARNs', hint: 'Optional allowlist, one per line.' } },
    // `X-SES-MESSAGE-TAGS` → `mail.tags` (event publishing).
    trackingHeaders: (messageId) => ({ 'X-SES-MESSAGE-TAGS': `mailroom_message_id=${messageId}` }),
  },
} as const satisfies ProviderDescriptor;
