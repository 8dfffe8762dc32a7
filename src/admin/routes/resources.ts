import { Type, type Static, type TSchema } from '@sinclair/typebox';
import {
  KEY_MODES,
  KEY_TYPES,
  OUT_OF_CREDIT_MODES,
  PLANS,
  KEY_CREATORS,
  KEY_SCOPES,
  type ApiKey,
  type Organization,
  type Service,
  type SmtpSettings,
  type Suppression,
} from '../../domain/types.js';
import { Timestamp } from '../../http/schemas.js';
import { DESCRIPTORS } from '../../providers/index.js';
import { SECRET_MASK } from '../../providers/schema.js';
import { smtp } from '../../providers/smtp.js';
import { iso, isoOrNull } from '../../http/time.js';
import type { Store } from '../../storage/store.js';

/**
 * Response shapes of the admin API and the mappers that fill them. Settings come back under
 * the names the input schemas use (src/resources/inputs.ts), so what GET shows is what PUT
 * takes. Stored secrets never leave: they read as SECRET_MASK when set and "" when empty, and
 * a PUT that sends the mask back keeps the stored value.
 */
export { SECRET_MASK };
export const maskSecret = (value: string): string => (value === '' ? '' : SECRET_MASK);

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const oneOf = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));

// ---------------------------------------------------------------------------------------------
// Organizations

const SecurityResource = Type.Object({
  require_private_key: Type.Boolean(),
  allow_private_keys_in_browsers: Type.Boolean(),
  allowed_origins: Type.Array(Type.String()),
  allow_mobile_apps: Type.Boolean(),
  mobile_app_schemes: Type.Array(Type.String()),
  block_headless: Type.Boolean(),
  ip_limit: Type.Object({ requests: Type.Integer(), per_seconds: Type.Integer() }),
  recipient_daily_limit: Type.Integer(),
  link_domains: Type.Array(Type.String()),
  block_list: Type.Object({
    list: Type.Array(Type.String(), { description: 'Entries of the block list (also at /block-list)' }),
    watch_variable: Nullable(Type.String()),
  }),
  public_overdraft: Type.Boolean(),
});

export const OrganizationResource = Type.Object({
  id: Type.String(),
  name: Type.String(),
  plan: oneOf(PLANS),
  credits: Type.Union([Type.Integer(), Type.Literal('unlimited')], {
    description:
      "The balance (credits metered: the spec's rules), or 'unlimited' when credits are switched off " +
      '(the balance, kept for switching back, is at GET …/credits)',
  }),
  overdraft: Type.Integer(),
  when_out_of_credits: oneOf(OUT_OF_CREDIT_MODES),
  hold_queue_limit: Type.Integer(),
  email_verified: Type.Boolean(),
  suspended: Type.Boolean(),
  security: SecurityResource,
  captcha: Nullable(
    Type.Object({
      site_key: Type.String(),
      secret_key: Type.String({ description: `"${SECRET_MASK}" when set; send it back unchanged to keep the stored secret` }),
    }),
  ),
  held: Type.Integer({ description: 'Messages held for lack of credits' }),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type OrganizationResource = Static<typeof OrganizationResource>;

export async function organizationResource(store: Store, org: Organization): Promise<OrganizationResource> {
  const [held, blockList] = await Promise.all([store.messages.countHeld(org.id), store.blockList.list(org.id)]);
  const s = org.security;
  return {
    id: org.id,
    name: org.name,
    plan: org.plan,
    credits: org.credit_mode === 'unlimited' ? 'unlimited' : org.credits,
    overdraft: org.overdraft,
    when_out_of_credits: org.when_out_of_credits,
    hold_queue_limit: org.hold_queue_limit,
    email_verified: org.email_verified,
    suspended: org.suspended,
    security: {
      require_private_key: s.require_private_key,
      allow_private_keys_in_browsers: s.allow_private_keys_in_browsers,
      allowed_origins: s.allowed_origins,
      allow_mobile_apps: s.allow_mobile_apps,
      mobile_app_schemes: s.mobile_app_schemes,
      block_headless: s.block_headless,
      ip_limit: s.ip_limit,
      recipient_daily_limit: s.recipient_daily_limit,
      link_domains: s.link_domains,
      block_list: { list: blockList, watch_variable: s.block_list_watch_variable },
      public_overdraft: s.public_overdraft,
    },
    captcha: org.captcha === null ? null : { site_key: org.captcha.site_key, secret_key: maskSecret(org.captcha.secret_key) },
    held,
    created_at: iso(org.created_at),
    updated_at: iso(org.updated_at),
  };
}

// ---------------------------------------------------------------------------------------------
// Keys

export const KeyResource = Type.Object({
  id: Type.String(),
  type: oneOf(KEY_TYPES),
  // live, or test: sends run the whole pipeline but nothing leaves and no credit is taken (issue 27).
  mode: oneOf(KEY_MODES),
  hint: Type.String({ description: 'A recognisable fragment of the key, safe to show' }),
  public_key: Nullable(Type.String({ description: 'The value of a public key; null for private keys' })),
  status: oneOf(['active', 'revoked', 'rotated']),
  created_at: Timestamp,
  revoked_at: Nullable(Timestamp),
  // Issue 29.
  name: Nullable(Type.String({ description: 'A label for people; null when none was given' })),
  scope: Type.Union(
    KEY_SCOPES.map((v) => Type.Literal(v)),
    {
      description: '`send_only` (private keys): sends, but reads no history, message, template or test inbox',
    },
  ),
  last_used_at: Nullable(
    Type.String({
      format: 'date-time',
      description: 'When the key last authenticated a request (API or SMTP submission), to within a minute; null: never',
    }),
  ),
  created_by: Nullable(
    Type.Union(
      KEY_CREATORS.map((v) => Type.Literal(v)),
      {
        description: 'admin: admin API or UI; config: the YAML file; cli: mailroom keys; bootstrap: the demo; null: before 0019',
      },
    ),
  ),
});

export const IssuedKeyResource = Type.Composite([
  KeyResource,
  Type.Object({ key: Type.String({ description: 'The key itself; shown in this response only' }) }),
]);

export function keyResource(k: ApiKey): Static<typeof KeyResource> {
  return {
    id: k.id,
    type: k.type,
    mode: k.mode,
    hint: k.hint,
    public_key: k.public_key,
    status: k.status,
    created_at: iso(k.created_at),
    revoked_at: isoOrNull(k.revoked_at),
    name: k.name,
    scope: k.scope,
    last_used_at: isoOrNull(k.last_used_at),
    created_by: k.created_by,
  };
}

// ---------------------------------------------------------------------------------------------
// Services

/** The `events` settings of every source as GET shows them (secrets masked), each optional, after `source`. */
const EventsResource = Type.Object({
  source: Type.String(),
  ...Object.fromEntries(
    DESCRIPTORS.flatMap((p) => Object.entries(p.events?.view ?? {}).map(([name, schema]) => [name, Type.Optional(schema)])),
  ),
});

/** Settings of a service's `events` block that are secrets: never shown, kept when the mask comes back. */
export const EVENTS_SECRETS: readonly string[] = DESCRIPTORS.flatMap((p) => p.events?.secrets ?? []);

/** Unset optional settings are left out (not null), so a GET body minus id/version/times is a valid PUT body. */
export const ServiceResource = Type.Object({
  id: Type.String(),
  provider: Type.String(),
  default: Type.Boolean(),
  smtp: Type.Optional(smtp.settings.view),
  from_email: Type.Optional(Type.String()),
  from_name: Type.Optional(Type.String()),
  bounce_domain: Type.Optional(Type.String()),
  complaint_address: Type.Optional(Type.String()),
  max_per_second: Nullable(Type.Number()),
  events: Type.Optional(EventsResource),
  events_url: Type.String({
    description:
      "Read-only: where the provider posts this service's events (`events` settings). The token in it is the only thing that " +
      'names the service: treat the URL as a secret; rotate it at POST …/events-token/rotate',
  }),
  version: Type.Integer(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The SMTP block of a service's stored settings (written by serviceFields), or null. */
export function smtpSettings(settings: Record<string, unknown>): SmtpSettings | null {
  const smtp = settings.smtp;
  if (!isRecord(smtp)) return null;
  const dkim = smtp.dkim;
  return {
    host: str(smtp.host),
    port: typeof smtp.port === 'number' ? smtp.port : 0,
    secure: smtp.secure === true,
    user: str(smtp.user),
    pass: str(smtp.pass),
    dkim: isRecord(dkim)
      ? { domain_name: str(dkim.domain_name), key_selector: str(dkim.key_selector), private_key: str(dkim.private_key) }
      : null,
  };
}

/** The stored `events` block with its secrets masked, or undefined when the service has none. */
function eventsResource(settings: Record<string, unknown>): Static<typeof EventsResource> | undefined {
  const e = settings.events;
  if (!isRecord(e)) return undefined;
  const out: Record<string, unknown> = { source: str(e.source) };
  for (const [name, schema] of Object.entries<TSchema>(EventsResource.properties)) {
    const v = e[name];
    if (name === 'source') continue;
    if (schema.type === 'array' && Array.isArray(v)) out[name] = v.filter((a): a is string => typeof a === 'string');
    else if (schema.type === 'string' && typeof v === 'string') out[name] = EVENTS_SECRETS.includes(name) ? maskSecret(v) : v;
  }
  return out as Static<typeof EventsResource>;
}

/** `eventsUrl`: `<base_url>/v1/provider-events/<token>` (the token is not part of Service). */
export function serviceResource(s: Service, eventsUrl: string): Static<typeof ServiceResource> {
  const smtp = smtpSettings(s.settings);
  const events = eventsResource(s.settings);
  return {
    id: s.id,
    provider: s.provider,
    default: s.is_default,
    ...(smtp === null
      ? {}
      : {
          smtp: {
            host: smtp.host,
            port: smtp.port,
            secure: smtp.secure,
            user: smtp.user,
            pass: maskSecret(smtp.pass),
            ...(smtp.dkim === null ? {} : { dkim: { ...smtp.dkim, private_key: maskSecret(smtp.dkim.private_key) } }),
          },
        }),
    ...(typeof s.settings.from_email === 'string' ? { from_email: s.settings.from_email } : {}),
    ...(typeof s.settings.from_name === 'string' ? { from_name: s.settings.from_name } : {}),
    ...(typeof s.settings.bounce_domain === 'string' ? { bounce_domain: s.settings.bounce_domain } : {}),
    ...(typeof s.settings.complaint_address === 'string' ? { complaint_address: s.settings.complaint_address } : {}),
    max_per_second: s.max_per_second,
    ...(events === undefined ? {} : { events }),
    events_url: eventsUrl,
    version: s.version,
    created_at: iso(s.created_at),
    updated_at: iso(s.updated_at),
  };
}

// ---------------------------------------------------------------------------------------------
// Lists and messages

export const SuppressionResource = Type.Object({
  email: Type.String(),
  reason: Type.String(),
  created_at: Timestamp,
});

export function suppressionResource(s: Suppression): Static<typeof SuppressionResource> {
  return { email: s.email, reason: s.reason, created_at: iso(s.created_at) };
}

export const BlockListResource = Type.Object({
  items: Type.Array(Type.String()),
  watch_variable: Nullable(Type.String({ description: 'Template parameter whose value is also checked against the list' })),
});

export const MessageAction = Type.Object({
  message_id: Type.String(),
  status: Type.String({ description: 'The status the message is in now' }),
});
