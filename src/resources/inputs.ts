import { Type, type Static, type TObject, type TOptional } from '@sinclair/typebox';
import { AlertSettingsInput } from './alert-inputs.js';
import { KEY_MODES, KEY_SCOPES, KEY_TYPES, OUT_OF_CREDIT_MODES, PARAM_TYPES, PLANS } from '../domain/types.js';
import { APP_SCHEME_PATTERN } from '../domain/app-schemes.js';
import {
  DESCRIPTORS,
  PROVIDER_NAMES,
  type PROVIDERS,
  SETTINGS_PROVIDERS,
  WEBHOOK_SOURCES,
  type SettingsProvider,
} from '../providers/index.js';
import { literals } from '../providers/schema.js';
import { WebhookInput } from './webhook-inputs.js';

/**
 * Input shapes of the operator-owned resources, shared by the YAML config file and the admin
 * API, so both accept exactly the same fields with the same defaults. The providers' blocks and
 * their events settings come from the registry (src/providers/).
 */

export const ResourceId = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$',
  description: '1..64 of A-Z a-z 0-9 _ . -',
});

export const SecurityInput = Type.Object(
  {
    require_private_key: Type.Optional(Type.Boolean()),
    allow_private_keys_in_browsers: Type.Optional(Type.Boolean()),
    allowed_origins: Type.Optional(
      Type.Array(Type.String({ pattern: '^(\\*\\.)?[A-Za-z0-9.-]+(:\\d+)?$' }), {
        description: 'Domains such as example.com or *.example.com',
      }),
    ),
    allow_mobile_apps: Type.Optional(Type.Boolean()),
    mobile_app_schemes: Type.Optional(
      Type.Array(Type.String({ pattern: APP_SCHEME_PATTERN }), {
        description:
          "URL schemes of the organization's apps (myapp for myapp://…): redirect targets the CAPTCHA widget page may hand a " +
          'token to. http, https, javascript, data, vbscript, file, ' +
          'blob and the other schemes a browser handles itself are refused.',
      }),
    ),
    block_headless: Type.Optional(Type.Boolean()),
    ip_limit: Type.Optional(
      Type.Object(
        {
          requests: Type.Integer({ minimum: 1 }),
          per_seconds: Type.Integer({ minimum: 1, maximum: 86_400 }),
        },
        { additionalProperties: false },
      ),
    ),
    recipient_daily_limit: Type.Optional(Type.Integer({ minimum: 1 })),
    link_domains: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 300 }), {
        description:
          'Domains links may point to, each covering its subdomains: example.com (*.example.com ' +
          'means the same; one trailing dot is dropped). An IDN is stored as its A-label ' +
          '(exämple.com → xn--exmple-cua.com). No scheme, port, path or IP address (400 naming the entry)',
      }),
    ),
    block_list: Type.Optional(
      Type.Object(
        {
          list: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
          watch_variable: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Null()])),
        },
        { additionalProperties: false },
      ),
    ),
    public_overdraft: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type SecurityInput = Static<typeof SecurityInput>;

export const CaptchaInput = Type.Object(
  {
    site_key: Type.String({ minLength: 1 }),
    secret_key: Type.String({ minLength: 1 }),
  },
  { additionalProperties: false },
);

/**
 * `credits`: a whole number is a starting balance (metered, the spec's rules; applied only when the
 * organization is created), `unlimited` switches credits off, `metered` switches them back on with
 * the balance kept (issue 29). Left out: a new organization is metered from 0, an existing one
 * keeps its mode.
 */
export const CreditsInput = Type.Union(
  [
    Type.Integer({ minimum: 0, description: 'Starting balance, metered; applied only when the organization is created' }),
    Type.Literal('unlimited', {
      description: 'No credit taken, no message held or refused for credits; held messages are released',
    }),
    Type.Literal('metered', { description: 'The credit rules apply, from the balance kept (0 for a new organization)' }),
  ],
  { description: "A starting balance, 'unlimited' or 'metered'; left out: 0 and metered, or unchanged" },
);
export type CreditsInput = Static<typeof CreditsInput>;

/** Organization settings (everything but its keys, services, templates and lists). */
export const OrganizationSettingsInput = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    plan: Type.Optional(literals(PLANS)),
    credits: Type.Optional(CreditsInput),
    overdraft: Type.Optional(Type.Integer({ minimum: 0 })),
    when_out_of_credits: Type.Optional(literals(OUT_OF_CREDIT_MODES)),
    hold_queue_limit: Type.Optional(Type.Integer({ minimum: 0 })),
    email_verified: Type.Optional(Type.Boolean()),
    suspended: Type.Optional(Type.Boolean()),
    security: Type.Optional(SecurityInput),
    captcha: Type.Optional(Type.Union([CaptchaInput, Type.Null()])),
  },
  { additionalProperties: false },
);
export type OrganizationSettingsInput = Static<typeof OrganizationSettingsInput>;

/** A key's label (issue 29): spaces around it are dropped; blank or control characters are refused (key-details.ts). */
export const KeyName = Type.String({ minLength: 1, maxLength: 100, description: 'A label for people, 1–100 characters' });

export const KeyInput = Type.Object(
  {
    type: literals(KEY_TYPES),
    key: Type.Optional(Type.String({ pattern: '^(pk|sk)_[A-Za-z0-9_-]{8,280}$' })),
    /** `test` (issue 27): sends run the whole pipeline, nothing leaves, no credit; a given value starts pk_test_/sk_test_. */
    mode: Type.Optional(literals(KEY_MODES)),
    name: Type.Optional(KeyName),
    /** Issue 29: `send_only` (private keys only) sends but reads no history, message, template or test inbox. */
    scope: Type.Optional(literals(KEY_SCOPES)),
  },
  { additionalProperties: false },
);
export type KeyInput = Static<typeof KeyInput>;

/**
 * Each provider's settings block, optional, under its name (`smtp`, `ses`, …: src/providers/).
 * Object.fromEntries types its result loosely; the casts here give the derived objects the types
 * the registry's literal descriptors spell out (test/providers/registry.test.ts checks the values).
 */
const ProviderBlocks = Object.fromEntries(
  SETTINGS_PROVIDERS.map((p) => [p.name, Type.Optional(p.settings.schema)]),
) as unknown as { [P in SettingsProvider as P['name']]: TOptional<P['settings']['schema']> };

type EventsSource = Extract<(typeof PROVIDERS)[number], { events: object }>;
/** `A | B` → `A & B`: the settings of every source in one object type. */
type Merged<U> = (U extends unknown ? (u: U) => void : never) extends (m: infer M) => void ? M : never;
type AllEventsFields = Merged<EventsSource['events']['fields']>;
type EventsFields = { [K in keyof AllEventsFields]: TOptional<AllEventsFields[K]> };

const EventsFields = Object.fromEntries(
  DESCRIPTORS.flatMap((p) => Object.entries(p.events?.fields ?? {}).map(([name, schema]) => [name, Type.Optional(schema)])),
) as unknown as EventsFields;

/**
 * Where the service's provider events come from and how they are verified (issue 12): the
 * settings of every source, each optional; which ones a source needs is checked by
 * eventsProblems (src/resources/normalize.ts). No two sources share a setting's name
 * (test/providers/registry.test.ts).
 */
export const EventsInput = Type.Object(
  {
    source: literals(WEBHOOK_SOURCES),
    ...EventsFields,
  },
  { additionalProperties: false },
);
export type EventsInput = Static<typeof EventsInput>;

export const ServiceInput = Type.Object(
  {
    provider: literals(PROVIDER_NAMES),
    default: Type.Optional(Type.Boolean()),
    ...ProviderBlocks,
    failover: Type.Optional(
      Type.Array(ResourceId, {
        maxItems: 10,
        description:
          "Services of the same organization tried in order while this one's circuit breaker is open (not itself, no cycles)",
      }),
    ),
    failover_on_service_error: Type.Optional(
      Type.Boolean({ description: 'Also fail over on held_service_error (authentication, an unverified sender); default false' }),
    ),
    from_email: Type.Optional(Type.String({ minLength: 3 })),
    from_name: Type.Optional(Type.String()),
    max_per_second: Type.Optional(Type.Union([Type.Number({ exclusiveMinimum: 0 }), Type.Null()])),
    events: Type.Optional(EventsInput),
    bounce_domain: Type.Optional(
      Type.String({
        pattern: '^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$',
        description:
          'SMTP services: mail goes out with the envelope sender bounce+<token>@<bounce_domain> (VERP); its MX points at ' +
          "mailroom's inbound SMTP listener",
      }),
    ),
    complaint_address: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,253}$',
        description: 'An address feedback loops (e.g. Yahoo CFL) send ARF reports to; the listener accepts it too',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ServiceInput = Static<typeof ServiceInput>;

export const ParamSpecInput = Type.Object(
  {
    name: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_.-]{0,63}$' }),
    type: literals(PARAM_TYPES),
    required: Type.Optional(Type.Boolean()),
    min_length: Type.Optional(Type.Integer({ minimum: 0 })),
    max_length: Type.Optional(Type.Integer({ minimum: 0 })),
    pattern: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    enum: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Number()]), { minItems: 1 })),
    minimum: Type.Optional(Type.Number()),
    maximum: Type.Optional(Type.Number()),
    description: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const TemplateInput = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200 })),
    service_id: Type.Optional(Type.Union([ResourceId, Type.Null()])),
    subject: Type.Optional(Type.String()),
    to: Type.Optional(Type.String()),
    cc: Type.Optional(Type.String()),
    bcc: Type.Optional(Type.String()),
    from_name: Type.Optional(Type.String()),
    from_email: Type.Optional(Type.String()),
    reply_to: Type.Optional(Type.String()),
    html: Type.Optional(Type.String()),
    text: Type.Optional(Type.String()),
    captcha: Type.Optional(Type.Boolean()),
    allow_dynamic_recipients: Type.Optional(Type.Boolean()),
    allow_attachments: Type.Optional(Type.Boolean()),
    strict_params: Type.Optional(Type.Boolean()),
    enforce_link_allowlist: Type.Optional(Type.Boolean()),
    frozen: Type.Optional(Type.Boolean()),
    params: Type.Optional(Type.Array(ParamSpecInput)),
    sample_params: Type.Optional(
      Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
        description:
          "Sample parameters for the editor's preview and send test: stored as given (at most 64 KiB of JSON), " +
          'a mismatch with `params` is a warning, not a refusal; left out or null: none',
      }),
    ),
  },
  { additionalProperties: false },
);
export type TemplateInput = Static<typeof TemplateInput>;

export const SuppressionInput = Type.Object(
  {
    email: Type.String({
      minLength: 3,
      maxLength: 254,
      description:
        'Stored lower-cased with an IDN domain as its A-label ' +
        '(zoë@exämple.com is zoë@xn--exmple-cua.com); either spelling finds it',
    }),
    reason: Type.Optional(literals(['hard_bounce', 'complaint', 'manual'] as const)),
  },
  { additionalProperties: false },
);
export type SuppressionInput = Static<typeof SuppressionInput>;

function withId<T extends TObject>(schema: T) {
  return Type.Composite([Type.Object({ id: ResourceId }), schema], { additionalProperties: false });
}

export const ConfigFile = Type.Object(
  {
    organizations: Type.Array(
      Type.Composite(
        [
          Type.Object({ id: ResourceId }),
          OrganizationSettingsInput,
          Type.Object({
            keys: Type.Optional(Type.Array(KeyInput)),
            services: Type.Optional(Type.Array(withId(ServiceInput))),
            templates: Type.Optional(Type.Array(withId(TemplateInput))),
            suppressions: Type.Optional(Type.Array(SuppressionInput)),
            webhooks: Type.Optional(Type.Array(WebhookInput)),
            alerts: Type.Optional(AlertSettingsInput),
          }),
        ],
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type ConfigFile = Static<typeof ConfigFile>;
