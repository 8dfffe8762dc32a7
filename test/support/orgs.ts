import type { ConfigFile } from '../../src/resources/inputs.js';
import { CONTACT_TEMPLATE } from './seed.js';

/**
 * Organizations and templates of the tests that seed organizations of their own (keys, origins,
 * protection, lists, history), beside the one `acme` that ./seed.ts writes.
 */

export type OrgInput = ConfigFile['organizations'][number];
export type TemplateSeed = NonNullable<OrgInput['templates']>[number];
export type SecurityInput = NonNullable<OrgInput['security']>;

/** The Origin the test organizations allow (BASE_SECURITY's site). */
export const ORIGIN = 'https://example.com';

/** A public and a private key per organization: `pk_<id>_public_<n>`, `sk_<id>_private_<n>`. */
export const pkOf = (id: string, n = 1): string => `pk_${id}_public_${n}`;
export const skOf = (id: string, n = 1): string => `sk_${id}_private_${n}`;

/** `publicKeys` public keys, then `privateKeys` private ones, numbered from 1. */
export function keysOf(id: string, publicKeys = 1, privateKeys = 1): NonNullable<OrgInput['keys']> {
  return [
    ...Array.from({ length: publicKeys }, (_, i) => ({ type: 'public' as const, key: pkOf(id, i + 1) })),
    ...Array.from({ length: privateKeys }, (_, i) => ({ type: 'private' as const, key: skOf(id, i + 1) })),
  ];
}

/**
 * Limits that would otherwise get in the way of tests sending many messages from one address
 * (the per-IP limit of public keys is 10 per minute by default): the fastest plan and a very
 * wide per-IP window. They change nothing else about the rules under test.
 */
export const ROOMY = { plan: 'business_200k', ip_limit: { requests: 100_000, per_seconds: 1 } } as const;

/** The security every test organization starts from: one allowed site, mobile apps on, ROOMY's per-IP window. */
export const BASE_SECURITY: SecurityInput = {
  allowed_origins: ['example.com'],
  allow_mobile_apps: true,
  ip_limit: ROOMY.ip_limit,
};

/**
 * An organization with keys of its own (keysOf), the outbox as default service, the `contact`
 * template, ROOMY's plan and 1000 credits. `extra` replaces top-level fields; `security` is
 * merged over BASE_SECURITY (a `security` inside `extra` is ignored).
 */
export function org(id: string, extra: Partial<OrgInput> = {}, security: SecurityInput = {}): OrgInput {
  return {
    id,
    name: id,
    plan: ROOMY.plan,
    credits: 1000,
    keys: keysOf(id),
    services: [{ id: 'outbox', provider: 'outbox', default: true }],
    templates: [CONTACT_TEMPLATE],
    ...extra,
    security: { ...BASE_SECURITY, ...security },
  };
}

/**
 * `org` with a test file's own defaults (which may depend on the id, like per-organization
 * CAPTCHA secrets); the call's `extra` and `security` still win over them.
 */
export function orgsLike(
  defaults: (id: string) => Partial<OrgInput>,
  security: SecurityInput = {},
): (id: string, extra?: Partial<OrgInput>, more?: SecurityInput) => OrgInput {
  return (id, extra = {}, more = {}) => org(id, { ...defaults(id), ...extra }, { ...security, ...more });
}

/** `contact`, but its send needs a CAPTCHA token (rule 8). */
export const PROTECTED_TEMPLATE: TemplateSeed = { ...CONTACT_TEMPLATE, id: 'protected', captcha: true };

/**
 * Recipients from parameters: `to` (required), `cc` and `bcc`, and an optional `name` in the
 * subject and text. Private keys only (no CAPTCHA), as the history and list tests send it.
 */
export const DYN: TemplateSeed = {
  id: 'dyn',
  subject: 'Hello {{name}}',
  to: '{{to}}',
  cc: '{{cc}}',
  bcc: '{{bcc}}',
  from_email: 'noreply@acme.test',
  text: 'Hi {{name}}',
  allow_dynamic_recipients: true,
  strict_params: true,
  params: [
    { name: 'to', type: 'string', required: true },
    { name: 'cc', type: 'string' },
    { name: 'bcc', type: 'string' },
    { name: 'name', type: 'string' },
  ],
};
