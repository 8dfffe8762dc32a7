import { DEFAULT_SECURITY, type Organization, type ParamSpec, type SecuritySettings } from '../domain/types.js';
import type { OrganizationFields } from '../storage/organizations.js';
import type { ServiceFields } from '../storage/services.js';
import type { TemplateFields } from '../storage/templates.js';
import { linkDomainList } from '../domain/link-domains.js';
import { isValidSecret } from '../webhooks/signing.js';
import { isWebhookEventType, WEBHOOK_EVENT_TYPES, type WebhookEventFilter, type WebhookEventType } from '../webhooks/types.js';
import { descriptorOf } from '../providers/index.js';
import { smtp } from '../providers/smtp.js';
import { providerSettings } from './provider-settings.js';
import type { EventsInput, OrganizationSettingsInput, SecurityInput, ServiceInput, TemplateInput } from './inputs.js';

/**
 * Input (YAML or admin API) → stored fields. Omitted settings keep their current value when
 * there is one, else the default: a partial update never resets what it does not name.
 */

export function securityFrom(input: SecurityInput | undefined, base: SecuritySettings = DEFAULT_SECURITY): SecuritySettings {
  const i = input ?? {};
  return {
    require_private_key: i.require_private_key ?? base.require_private_key,
    allow_private_keys_in_browsers: i.allow_private_keys_in_browsers ?? base.allow_private_keys_in_browsers,
    allowed_origins: i.allowed_origins?.map((o) => o.toLowerCase()) ?? base.allowed_origins,
    allow_mobile_apps: i.allow_mobile_apps ?? base.allow_mobile_apps,
    mobile_app_schemes: i.mobile_app_schemes?.map((s) => s.toLowerCase()) ?? base.mobile_app_schemes,
    block_headless: i.block_headless ?? base.block_headless,
    ip_limit: i.ip_limit ?? base.ip_limit,
    recipient_daily_limit: i.recipient_daily_limit ?? base.recipient_daily_limit,
    link_domains: i.link_domains !== undefined ? linkDomainList(i.link_domains) : base.link_domains,
    block_list_watch_variable:
      i.block_list?.watch_variable !== undefined ? i.block_list.watch_variable : base.block_list_watch_variable,
    public_overdraft: i.public_overdraft ?? base.public_overdraft,
  };
}

/**
 * Defaults of a new organization: a paying plan, verified, metered (the spec's credit rules),
 * holding sends when credits run out. `credits` as a number is a starting balance only, and names
 * the metered mode; left out, an existing organization keeps its mode.
 */
export function organizationFields(id: string, input: OrganizationSettingsInput, current?: Organization): OrganizationFields {
  const given = input.credits;
  return {
    name: input.name ?? current?.name ?? id,
    plan: input.plan ?? current?.plan ?? 'free',
    credits: current?.credits ?? (typeof given === 'number' ? given : 0),
    credit_mode: given === undefined ? (current?.credit_mode ?? 'metered') : given === 'unlimited' ? 'unlimited' : 'metered',
    overdraft: input.overdraft ?? current?.overdraft ?? 0,
    when_out_of_credits: input.when_out_of_credits ?? current?.when_out_of_credits ?? 'hold',
    hold_queue_limit: input.hold_queue_limit ?? current?.hold_queue_limit ?? 1000,
    email_verified: input.email_verified ?? current?.email_verified ?? true,
    suspended: input.suspended ?? current?.suspended ?? false,
    security: securityFrom(input.security, current?.security),
    captcha: input.captcha !== undefined ? input.captcha : (current?.captcha ?? null),
  };
}

export function serviceFields(input: ServiceInput): ServiceFields {
  const settings: Record<string, unknown> = {};
  if (input.smtp !== undefined) {
    // Every field present (the stored shape is SmtpSettings): the descriptor's defaults fill the rest.
    const d = smtp.settings.defaults;
    settings.smtp = {
      host: input.smtp.host,
      port: input.smtp.port,
      secure: input.smtp.secure ?? d.secure,
      user: input.smtp.user ?? d.user,
      pass: input.smtp.pass ?? d.pass,
      dkim: input.smtp.dkim ?? d.dkim,
    };
  }
  if (input.from_email !== undefined) settings.from_email = input.from_email;
  if (input.from_name !== undefined) settings.from_name = input.from_name;
  if (input.bounce_domain !== undefined) settings.bounce_domain = input.bounce_domain.toLowerCase();
  if (input.complaint_address !== undefined) settings.complaint_address = input.complaint_address.toLowerCase();
  if (input.events !== undefined) settings.events = eventsSettings(input.events);
  Object.assign(settings, providerSettings(input));
  return {
    provider: input.provider,
    settings,
    is_default: input.default ?? false,
    max_per_second: input.max_per_second ?? null,
  };
}

/** The stored `events` block: the source and the settings given (left-out ones are not stored). */
export function eventsSettings(input: EventsInput): Record<string, unknown> {
  const out: Record<string, unknown> = { source: input.source };
  for (const [name, value] of Object.entries(input)) {
    if (name !== 'source' && value !== undefined) out[name] = value;
  }
  return out;
}

/** Settings the configured source needs and the block lacks, as field paths and messages. */
export function eventsProblems(input: EventsInput | undefined): Array<{ field: string; message: string }> {
  if (input === undefined) return [];
  // The settings the source cannot verify without (issue 12), as its descriptor lists them.
  const required = descriptorOf(input.source)?.events?.required ?? [];
  return required
    .filter((name) => (input as Readonly<Record<string, unknown>>)[name] === undefined)
    .map((name) => ({ field: `events.${name}`, message: `is required when events.source is ${input.source}` }));
}

export function templateFields(id: string, input: TemplateInput): TemplateFields {
  return {
    name: input.name ?? id,
    service_id: input.service_id ?? null,
    subject: input.subject ?? '',
    to: input.to ?? '',
    cc: input.cc ?? '',
    bcc: input.bcc ?? '',
    from_name: input.from_name ?? '',
    from_email: input.from_email ?? '',
    reply_to: input.reply_to ?? '',
    html: input.html ?? '',
    text: input.text ?? '',
    params: (input.params ?? []).map((p) => stripUndefined(p) as ParamSpec),
    sample_params: (input.sample_params ?? null) as Record<string, unknown> | null,
    captcha: input.captcha ?? false,
    allow_dynamic_recipients: input.allow_dynamic_recipients ?? false,
    allow_attachments: input.allow_attachments ?? false,
    strict_params: input.strict_params ?? false,
    enforce_link_allowlist: input.enforce_link_allowlist ?? false,
    frozen: input.frozen ?? false,
  };
}

/**
 * A template's sample parameters are the editor's, not a send's: 64 KiB of JSON is a generous
 * sample (a send's template_params may reach 256 KiB) and keeps a list of 1,000 templates under
 * 64 MiB at worst.
 */
export const MAX_SAMPLE_PARAMS_BYTES = 64 * 1024;

/** Why `sample_params` cannot be stored, or undefined when it can. */
export function sampleParamsProblem(sample: Record<string, unknown> | null): string | undefined {
  if (sample === null) return undefined;
  const size = Buffer.byteLength(JSON.stringify(sample));
  return size > MAX_SAMPLE_PARAMS_BYTES ? `is ${size} bytes of JSON; the limit is ${MAX_SAMPLE_PARAMS_BYTES}` : undefined;
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

// ---------------------------------------------------------------------------------------------
// Outbound webhook endpoints (issue 13): the checks the config file, the admin API and the CLI share.

type FieldProblem = { field: string; message: string };

/** Absent or `["*"]`: every event. `*` beside named types, or a name that is no event type, is a problem. */
export function eventFilter(events: readonly string[] | undefined, problems: FieldProblem[]): WebhookEventFilter {
  if (events === undefined || (events.length === 1 && events[0] === '*')) return '*';
  if (events.length === 0) {
    problems.push({ field: 'events', message: 'must name at least one event type, or be ["*"] for all' });
    return '*';
  }
  const known: WebhookEventType[] = [];
  events.forEach((e, i) => {
    if (e === '*') problems.push({ field: `events.${i}`, message: 'is "*", which means every event and stands alone' });
    else if (!isWebhookEventType(e))
      problems.push({ field: `events.${i}`, message: `"${e}" is not an event type (${WEBHOOK_EVENT_TYPES.join(', ')})` });
    else if (!known.includes(e)) known.push(e);
  });
  return known;
}

export function secretProblem(secret: string | undefined): FieldProblem | null {
  if (secret === undefined || isValidSecret(secret)) return null;
  return { field: 'secret', message: 'must be whsec_ followed by the padded standard base64 of at least 24 bytes' };
}
