import * as Type from '@sinclair/typebox';
import type { ProviderDescriptor } from './descriptor.js';
import { SECRET_MASK } from './schema.js';

/**
 * An SMTP relay (nodemailer: STARTTLS or TLS, auth, DKIM). Its block is stored whole, every
 * field present (src/resources/normalize.ts), and only SMTP services may bounce to a VERP
 * address (`bounce_domain`).
 */
const schema = Type.Object(
  {
    host: Type.String({ minLength: 1 }),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    secure: Type.Optional(Type.Boolean({ description: 'TLS from the first byte (port 465); otherwise STARTTLS when offered' })),
    user: Type.Optional(Type.String()),
    pass: Type.Optional(Type.String()),
    dkim: Type.Optional(
      Type.Object(
        {
          domain_name: Type.String({ minLength: 1 }),
          key_selector: Type.String({ minLength: 1 }),
          private_key: Type.String({ minLength: 1 }),
        },
        // The title names the group the operator UI shows these fields in, apart from the connection.
        { additionalProperties: false, title: 'DKIM signing' },
      ),
    ),
  },
  { additionalProperties: false },
);

const view = Type.Object({
  host: Type.String(),
  port: Type.Integer(),
  secure: Type.Boolean(),
  user: Type.String(),
  pass: Type.String({ description: `"${SECRET_MASK}" when set; send it back unchanged to keep the stored password` }),
  dkim: Type.Optional(
    Type.Object({
      domain_name: Type.String(),
      key_selector: Type.String(),
      private_key: Type.String({ description: `"${SECRET_MASK}"; send it back unchanged to keep the stored key` }),
    }),
  ),
});

export const smtp = {
  name: 'smtp',
  title: 'SMTP',
  kind: 'smtp',
  settings: {
    schema,
    view,
    secrets: ['pass', 'dkim.private_key'],
    // The password goes only to the server and account it was given for (DKIM's key goes nowhere).
    destination: ['host', 'port', 'user'],
    defaults: { secure: false, user: '', pass: '', dkim: null },
    labels: {
      host: { label: 'Host' },
      port: { label: 'Port' },
      secure: { label: 'TLS from the first byte (port 465); otherwise STARTTLS when offered' },
      user: { label: 'User' },
      pass: { label: 'Password' },
      'dkim.domain_name': { label: 'DKIM domain', hint: 'Optional: all three DKIM fields, or none.' },
      'dkim.key_selector': { label: 'DKIM key selector' },
      'dkim.private_key': { label: 'DKIM private key' },
    },
  },
} as const satisfies ProviderDescriptor;
