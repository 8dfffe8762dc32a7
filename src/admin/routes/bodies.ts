import { Type, type Static, type TOptional, type TPartial } from '@sinclair/typebox';
import { SETTINGS_PROVIDERS, type SettingsProvider } from '../../providers/index.js';
import {
  CaptchaInput,
  CreditsInput,
  EventsInput,
  OrganizationSettingsInput,
  SecurityInput,
  ServiceInput,
  TemplateInput,
} from '../../resources/inputs.js';

/**
 * PUT and PATCH bodies of the admin API, built from the input schemas the config file uses
 * (src/resources/inputs.ts) so both accept the same values. A PUT body is what GET returns:
 * the read-only fields are accepted here and dropped by withoutReadOnly. Which fields a PUT
 * must name is the README's "Admin API" table; the rule is that a field whose omission could
 * blank content, change who sends, or loosen a protection is required, and only fields whose
 * default adds nothing and allows nothing may be left out.
 */

const ReadOnly = {
  id: Type.Optional(Type.String({ description: 'Read-only: ignored, but must match the URL when given' })),
  version: Type.Optional(Type.Integer({ description: 'Read-only: ignored' })),
  created_at: Type.Optional(Type.String({ description: 'Read-only: ignored' })),
  updated_at: Type.Optional(Type.String({ description: 'Read-only: ignored' })),
};

// ---------------------------------------------------------------------------------------------
// Organizations: every setting is required; `credits` (a starting balance, used on creation
// only) and `security.block_list.list` (also managed at /block-list) may be left out.

const BlockListPut = Type.Object(
  {
    list: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description: 'When given, the block list becomes exactly this; when left out, it is not touched',
      }),
    ),
    watch_variable: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
  },
  { additionalProperties: false },
);

const SecurityPut = Type.Composite(
  [Type.Required(Type.Omit(SecurityInput, ['block_list'])), Type.Object({ block_list: BlockListPut })],
  { additionalProperties: false },
);

export const OrganizationPut = Type.Composite(
  [
    Type.Required(Type.Omit(OrganizationSettingsInput, ['credits', 'security'])),
    Type.Object({
      security: SecurityPut,
      credits: Type.Optional(CreditsInput),
      held: Type.Optional(Type.Integer({ description: 'Read-only: ignored' })),
      ...ReadOnly,
    }),
  ],
  { additionalProperties: false },
);
export type OrganizationPut = Static<typeof OrganizationPut>;

/** Security merges one level; `captcha` merges into the stored one (its masked secret keeps the stored secret). */
export const OrganizationPatch = Type.Composite(
  [
    Type.Omit(OrganizationSettingsInput, ['credits', 'captcha']),
    Type.Object({
      captcha: Type.Optional(Type.Union([Type.Partial(CaptchaInput), Type.Null()])),
      // A balance is no setting to patch (top up at POST …/credits): only the mode changes here.
      credits: Type.Optional(
        Type.Union([Type.Literal('unlimited'), Type.Literal('metered')], {
          description: "'unlimited' switches credits off (held messages are released); 'metered' back on, balance kept",
        }),
      ),
    }),
  ],
  { additionalProperties: false },
);
export type OrganizationPatch = Static<typeof OrganizationPatch>;

// ---------------------------------------------------------------------------------------------
// Services: `provider`, `default` and (for smtp) `smtp.host`/`smtp.port` are required; the
// rest adds something when given (authentication, DKIM, a default sender, pacing).

export const ServicePut = Type.Composite(
  [
    Type.Omit(ServiceInput, ['default']),
    Type.Object({
      default: Type.Boolean(),
      events_url: Type.Optional(Type.String({ description: 'Read-only: ignored (rotate it at …/events-token/rotate)' })),
      ...ReadOnly,
    }),
  ],
  { additionalProperties: false },
);
export type ServicePut = Static<typeof ServicePut>;
/** What GET returns may come back whole: `breaker` is read-only and ignored, as `events_url` is. */
export const ServicePutBody = Type.Composite(
  [ServicePut, Type.Object({ breaker: Type.Optional(Type.Unknown({ description: 'Read-only: ignored' })) })],
  { additionalProperties: false },
);

/** Provider blocks (`smtp`, `ses`, …) merge one level deep (a new api_key alone, a region alone). */
const PartialBlocks = Object.fromEntries(
  SETTINGS_PROVIDERS.map((p) => [p.name, Type.Optional(Type.Partial(p.settings.schema))]),
) as unknown as { [P in SettingsProvider as P['name']]: TOptional<TPartial<P['settings']['schema']>> };

export const ServicePatch = Type.Composite(
  [
    Type.Partial(Type.Omit(ServiceInput, [...SETTINGS_PROVIDERS.map((p) => p.name), 'events'])),
    Type.Object({
      ...PartialBlocks,
      // Merged into the stored block one level deep; the result must then name what its source needs.
      events: Type.Optional(Type.Partial(EventsInput)),
    }),
  ],
  { additionalProperties: false },
);
export type ServicePatch = Static<typeof ServicePatch>;

// ---------------------------------------------------------------------------------------------
// Templates: content may come flat (as in the config file) or under `content` (as GET shows
// it). The required fields are checked by the route, because either place may hold them.

export const CONTENT_FIELDS = ['subject', 'to', 'cc', 'bcc', 'from_name', 'from_email', 'reply_to', 'html', 'text'] as const;
export type ContentField = (typeof CONTENT_FIELDS)[number];

const ContentInput = Type.Partial(Type.Pick(TemplateInput, [...CONTENT_FIELDS]), { additionalProperties: false });

export const TemplatePut = Type.Composite([TemplateInput, Type.Object({ content: Type.Optional(ContentInput), ...ReadOnly })], {
  additionalProperties: false,
});
export type TemplatePut = Static<typeof TemplatePut>;

export const TemplatePatch = Type.Composite([TemplateInput, Type.Object({ content: Type.Optional(ContentInput) })], {
  additionalProperties: false,
});
export type TemplatePatch = Static<typeof TemplatePatch>;

/**
 * Required in a template PUT besides the content (`html` or `text`, at least one): what a send
 * needs and every switch, since a left-out switch would turn a protection off (`captcha`) or
 * change who sends (`service_id`, null for the organization's default service).
 */
export const TEMPLATE_REQUIRED = [
  'subject',
  'to',
  'from_email',
  'params',
  'service_id',
  'captcha',
  'allow_dynamic_recipients',
  'allow_attachments',
  'strict_params',
  'enforce_link_allowlist',
  'frozen',
] as const;
