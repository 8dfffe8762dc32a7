/**
 * Records of the domain. Field names are snake_case on purpose: they are the same names the
 * spec's JSON, the YAML config and the SQL columns use, so no layer renames them.
 */

export const PLANS = ['free', 'starter', 'pro', 'business_50k', 'business_100k', 'business_200k'] as const;
export type Plan = (typeof PLANS)[number];

export const OUT_OF_CREDIT_MODES = ['hold', 'reject'] as const;
export type OutOfCreditMode = (typeof OUT_OF_CREDIT_MODES)[number];

/**
 * Whether the organization's sends are metered (issue 29): `metered` is the spec's credit rules
 * (a credit per message; held or refused at zero); `unlimited` switches them off for a self-hoster
 * who does not meter themself: no credit taken, never held or refused for credits. The API and the
 * YAML file spell it as the organization's `credits` setting (`credits: unlimited`).
 */
export const CREDIT_MODES = ['metered', 'unlimited'] as const;
export type CreditMode = (typeof CREDIT_MODES)[number];

export const KEY_TYPES = ['public', 'private'] as const;
export type KeyType = (typeof KEY_TYPES)[number];

/**
 * A key's mode (issue 27): a test key's sends run the whole pipeline but nothing leaves the
 * machine and no credit is taken. The mode is the row's `api_keys.mode`, never the key's prefix
 * (seeded live keys are named `pk_test_…`).
 */
export const KEY_MODES = ['live', 'test'] as const;
export type KeyMode = (typeof KEY_MODES)[number];
/** What a private key may do (issue 29): `send_only` sends but reads no history, message or inbox. Public keys are `full`. */
export const KEY_SCOPES = ['full', 'send_only'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];
/**
 * Who made a key (issue 29): `admin` the admin API (and so the UI), `config` the YAML file
 * (`mailroom apply`, `serve` with MAILROOM_CONFIG), `cli` `mailroom keys create`, `bootstrap` the
 * demo organization's keys. A rotation's new key was made by who rotated (admin or cli). Null before migration 0019.
 */
export const KEY_CREATORS = ['admin', 'config', 'cli', 'bootstrap'] as const;
export type KeyCreator = (typeof KEY_CREATORS)[number];

export const MESSAGE_STATUSES = [
  'queued',
  'held',
  'held_service_error',
  'sending',
  'sent',
  'delivered',
  'bounced',
  'complained',
  'failed',
  'discarded',
] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

export const PARAM_TYPES = ['string', 'html', 'email', 'url', 'integer', 'number', 'boolean', 'date'] as const;
export type ParamType = (typeof PARAM_TYPES)[number];

export interface SecuritySettings {
  require_private_key: boolean;
  allow_private_keys_in_browsers: boolean;
  /** Domains such as `example.com` or `*.example.com`. */
  allowed_origins: string[];
  allow_mobile_apps: boolean;
  /**
   * URL schemes of the organization's own apps (`myapp`, for `myapp://…`): where the shared
   * CAPTCHA widget page may hand a solved token back with a redirect.
   */
  mobile_app_schemes: string[];
  block_headless: boolean;
  ip_limit: { requests: number; per_seconds: number };
  recipient_daily_limit: number;
  link_domains: string[];
  /** Template parameter whose value is also checked against the block list. */
  block_list_watch_variable: string | null;
  /** Whether public-key sends may use the overdraft (spec: off by default). */
  public_overdraft: boolean;
}

export const DEFAULT_SECURITY: Readonly<SecuritySettings> = Object.freeze({
  require_private_key: false,
  allow_private_keys_in_browsers: false,
  allowed_origins: [],
  allow_mobile_apps: false,
  mobile_app_schemes: [],
  block_headless: false,
  ip_limit: { requests: 10, per_seconds: 60 },
  recipient_daily_limit: 5,
  link_domains: [],
  block_list_watch_variable: null,
  public_overdraft: false,
});

export interface Organization {
  id: string;
  name: string;
  plan: Plan;
  /** The balance; kept but unused while `credit_mode` is `unlimited` (switching back meters from it). */
  credits: number;
  credit_mode: CreditMode;
  overdraft: number;
  when_out_of_credits: OutOfCreditMode;
  hold_queue_limit: number;
  email_verified: boolean;
  suspended: boolean;
  security: SecuritySettings;
  captcha: { site_key: string; secret_key: string } | null;
  created_at: number;
  updated_at: number;
}

export interface ApiKey {
  id: string;
  org_id: string;
  type: KeyType;
  /** Live or test (migration 0015); a message takes the mode of the key that sent it. */
  mode: KeyMode;
  /** The key itself for public keys (they are published anyway); null for private keys. */
  public_key: string | null;
  /** A recognisable fragment such as `sk_…9f2c`, safe to show. */
  hint: string;
  status: 'active' | 'revoked' | 'rotated';
  created_at: number;
  revoked_at: number | null;
  /**
   * When a rotated or revoked key stops (or stopped) authenticating; null while active. A key
   * rotated with a grace period keeps working until then.
   */
  expires_at: number | null;
  /** An operator's label, 1–100 characters; null when none was given (migration 0019). */
  name: string | null;
  scope: KeyScope;
  /** When the key last authenticated a request, to within a minute; null when never. */
  last_used_at: number | null;
  created_by: KeyCreator | null;
}

export interface SmtpSettings {
  host: string;
  port: number;
  secure: boolean;
  user: string;
  pass: string;
  dkim: { domain_name: string; key_selector: string; private_key: string } | null;
}

export interface Service {
  org_id: string;
  id: string;
  provider: string;
  /** Provider settings; for `smtp` an SmtpSettings, for `outbox` empty. */
  settings: Record<string, unknown>;
  is_default: boolean;
  /** Provider pacing: messages wait, requests are never refused for it. Null: unpaced. */
  max_per_second: number | null;
  /** Bumped on every change, so workers rebuild their transport. */
  version: number;
  created_at: number;
  updated_at: number;
}

export interface ParamSpec {
  name: string;
  type: ParamType;
  required?: boolean;
  min_length?: number;
  max_length?: number;
  pattern?: string;
  enum?: Array<string | number>;
  minimum?: number;
  maximum?: number;
  description?: string;
}

export interface TemplateContent {
  subject: string;
  to: string;
  cc: string;
  bcc: string;
  from_name: string;
  from_email: string;
  reply_to: string;
  html: string;
  text: string;
}

export interface TemplateFlags {
  captcha: boolean;
  allow_dynamic_recipients: boolean;
  allow_attachments: boolean;
  strict_params: boolean;
  enforce_link_allowlist: boolean;
  frozen: boolean;
}

export interface Template extends TemplateContent, TemplateFlags {
  org_id: string;
  id: string;
  name: string;
  service_id: string | null;
  params: ParamSpec[];
  /**
   * The editor's sample parameters (issue 29), stored as given (at most 64 KiB of JSON) and not
   * required to pass `params`: a schema change must never block a save. Null: none stored.
   */
  sample_params: Record<string, unknown> | null;
  /** Bumped on every change: compiled renderers and validators are cached by (id, version). */
  version: number;
  created_at: number;
  updated_at: number;
}

export interface Suppression {
  email: string;
  reason: string;
  created_at: number;
}

export interface MessageEvent {
  type: string;
  at: number;
  detail: Record<string, unknown> | null;
}

export interface Message {
  id: string;
  org_id: string;
  template_id: string;
  service_id: string;
  status: MessageStatus;
  subject: string | null;
  to: string[];
  created_at: number;
  sent_at: number | null;
}
