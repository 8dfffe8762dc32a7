/**
 * The organization settings form's values (strings and booleans, as inputs hold them) and
 * their conversion to and from the admin API's resource. Pure: unit-tested in test/ui/.
 */
import {
  OUT_OF_CREDIT_MODES,
  PLANS,
  type Organization,
  type OrganizationPatch,
  type OrganizationSettings,
} from '../api/organization-types.js';
import { reservedIdProblem } from '../lib/resource-id.js';

export interface OrgForm {
  id: string;
  name: string;
  plan: string;
  /** `unlimited` (credits switched off) or `metered` (the spec's credit rules). */
  credit_mode: string;
  /** The starting balance, sent when creating a metered organization. */
  credits: string;
  overdraft: string;
  when_out_of_credits: string;
  hold_queue_limit: string;
  email_verified: boolean;
  suspended: boolean;
  require_private_key: boolean;
  allow_private_keys_in_browsers: boolean;
  allowed_origins: string;
  allow_mobile_apps: boolean;
  mobile_app_schemes: string;
  block_headless: boolean;
  ip_requests: string;
  ip_per_seconds: string;
  recipient_daily_limit: string;
  link_domains: string;
  watch_variable: string;
  public_overdraft: boolean;
  captcha: boolean;
  captcha_site_key: string;
  /** Write-only: empty means "keep the stored secret". */
  captcha_secret_key: string;
  /** Whether a CAPTCHA secret is stored (the resource shows its mask). */
  captcha_secret_stored: boolean;
}

/**
 * A new organization's form: the server's defaults (src/domain/types.ts DEFAULT_SECURITY), except
 * two (issue 29), because a self-hoster does not meter themself: credits unlimited (the API's
 * default stays metered, for its clients), and the plan that limits least (business_200k: 50
 * requests a second, 15 MiB of attachments) instead of free (2 a second, no attachments).
 * Both are shown on the form and can be changed before creating.
 */
export const NEW_ORG_FORM: Readonly<OrgForm> = {
  id: '',
  name: '',
  plan: 'business_200k',
  credit_mode: 'unlimited',
  credits: '0',
  overdraft: '0',
  when_out_of_credits: 'hold',
  hold_queue_limit: '1000',
  email_verified: true,
  suspended: false,
  require_private_key: false,
  allow_private_keys_in_browsers: false,
  allowed_origins: '',
  allow_mobile_apps: false,
  mobile_app_schemes: '',
  block_headless: false,
  ip_requests: '10',
  ip_per_seconds: '60',
  recipient_daily_limit: '5',
  link_domains: '',
  watch_variable: '',
  public_overdraft: false,
  captcha: false,
  captcha_site_key: '',
  captcha_secret_key: '',
  captcha_secret_stored: false,
};

const lines = (list: readonly string[]): string => list.join('\n');
/** A textarea's entries: one per line or comma-separated, blanks dropped. */
export const entries = (text: string): string[] =>
  text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
/** A whole number as typed; NaN (sent as is) lets the server name the field when it is not one. */
const int = (text: string): number => (/^\s*-?\d+\s*$/.test(text) ? Number(text) : Number.NaN);

export function formFromOrganization(o: Organization): OrgForm {
  const s = o.security;
  return {
    id: o.id,
    name: o.name,
    plan: o.plan,
    credit_mode: o.credits === 'unlimited' ? 'unlimited' : 'metered',
    credits: o.credits === 'unlimited' ? '0' : String(o.credits),
    overdraft: String(o.overdraft),
    when_out_of_credits: o.when_out_of_credits,
    hold_queue_limit: String(o.hold_queue_limit),
    email_verified: o.email_verified,
    suspended: o.suspended,
    require_private_key: s.require_private_key,
    allow_private_keys_in_browsers: s.allow_private_keys_in_browsers,
    allowed_origins: lines(s.allowed_origins),
    allow_mobile_apps: s.allow_mobile_apps,
    mobile_app_schemes: lines(s.mobile_app_schemes),
    block_headless: s.block_headless,
    ip_requests: String(s.ip_limit.requests),
    ip_per_seconds: String(s.ip_limit.per_seconds),
    recipient_daily_limit: String(s.recipient_daily_limit),
    link_domains: lines(s.link_domains),
    watch_variable: s.block_list.watch_variable ?? '',
    public_overdraft: s.public_overdraft,
    captcha: o.captcha !== null,
    captcha_site_key: o.captcha?.site_key ?? '',
    captcha_secret_key: '',
    captcha_secret_stored: o.captcha !== null && o.captcha.secret_key !== '',
  };
}

/** Local problems the server would also report, named as its `details.fields` names them. */
export function formProblems(f: OrgForm, creating: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  if (creating && !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(f.id))
    out.id = '1 to 64 of A-Z a-z 0-9 _ . - (starting with a letter or digit)';
  else if (creating && reservedIdProblem(f.id) !== undefined) out.id = reservedIdProblem(f.id) as string;
  const whole = (field: string, text: string, min: number) => {
    const n = int(text);
    if (!Number.isInteger(n) || n < min) out[field] = `must be a whole number, at least ${min}`;
  };
  if (creating && f.credit_mode !== 'unlimited') whole('credits', f.credits, 0);
  whole('overdraft', f.overdraft, 0);
  whole('hold_queue_limit', f.hold_queue_limit, 0);
  whole('security.ip_limit.requests', f.ip_requests, 1);
  whole('security.ip_limit.per_seconds', f.ip_per_seconds, 1);
  whole('security.recipient_daily_limit', f.recipient_daily_limit, 1);
  if (f.captcha && f.captcha_site_key.trim() === '') out['captcha.site_key'] = 'is required with CAPTCHA on';
  if (f.captcha && !f.captcha_secret_stored && f.captcha_secret_key === '')
    out['captcha.secret_key'] = 'is required with CAPTCHA on';
  return out;
}

/**
 * Every setting the form holds: the body of a PUT (creating), and what `changedSettings`
 * compares to build a PATCH. The block list's entries are left out so they are not touched.
 * The CAPTCHA secret is sent only when typed (an edit without it keeps the stored one).
 * `credits` is the mode's word, or a metered organization's starting balance when creating
 * (a balance is no setting to edit: it is topped up).
 */
export function settingsFromForm(f: OrgForm, creating: boolean): OrganizationSettings {
  const captcha = !f.captcha
    ? null
    : { site_key: f.captcha_site_key.trim(), ...(f.captcha_secret_key !== '' ? { secret_key: f.captcha_secret_key } : {}) };
  return {
    name: f.name.trim() === '' ? f.id : f.name.trim(),
    plan: (PLANS as readonly string[]).includes(f.plan) ? (f.plan as OrganizationSettings['plan']) : 'free',
    credits: f.credit_mode === 'unlimited' ? 'unlimited' : creating ? int(f.credits) : 'metered',
    overdraft: int(f.overdraft),
    when_out_of_credits: (OUT_OF_CREDIT_MODES as readonly string[]).includes(f.when_out_of_credits)
      ? (f.when_out_of_credits as OrganizationSettings['when_out_of_credits'])
      : 'hold',
    hold_queue_limit: int(f.hold_queue_limit),
    email_verified: f.email_verified,
    suspended: f.suspended,
    security: {
      require_private_key: f.require_private_key,
      allow_private_keys_in_browsers: f.allow_private_keys_in_browsers,
      allowed_origins: entries(f.allowed_origins),
      allow_mobile_apps: f.allow_mobile_apps,
      mobile_app_schemes: entries(f.mobile_app_schemes),
      block_headless: f.block_headless,
      ip_limit: { requests: int(f.ip_requests), per_seconds: int(f.ip_per_seconds) },
      recipient_daily_limit: int(f.recipient_daily_limit),
      link_domains: entries(f.link_domains),
      block_list: { watch_variable: f.watch_variable.trim() === '' ? null : f.watch_variable.trim() },
      public_overdraft: f.public_overdraft,
    },
    captcha,
  };
}

/**
 * The PATCH body: only the settings that differ from `base` (the settings as loaded), so a save
 * does not write back values another operator (or the config file) changed meanwhile. PATCH
 * merges `security` one level deep, so it is compared key by key; `captcha` is sent whole when it
 * differs (a typed secret makes it differ; left out of the object, the stored secret stays).
 */
export function changedSettings(base: OrganizationSettings, next: OrganizationSettings): OrganizationPatch {
  const differs = (a: unknown, b: unknown) => JSON.stringify(a) !== JSON.stringify(b);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(next)) {
    if (key === 'security') continue;
    if (differs(value, (base as unknown as Record<string, unknown>)[key])) out[key] = value;
  }
  const security: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(next.security)) {
    if (differs(value, (base.security as unknown as Record<string, unknown>)[key])) security[key] = value;
  }
  if (Object.keys(security).length > 0) out.security = security;
  return out as OrganizationPatch;
}
