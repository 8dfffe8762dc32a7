/** Organizations and credits as the admin API shows them (src/admin/routes/organizations.ts, credits.ts); no DOM, shared with unit tests. */

export const PLANS = ['free', 'starter', 'pro', 'business_50k', 'business_100k', 'business_200k'] as const;
export const OUT_OF_CREDIT_MODES = ['hold', 'reject'] as const;

export interface Security {
  require_private_key: boolean;
  allow_private_keys_in_browsers: boolean;
  allowed_origins: string[];
  allow_mobile_apps: boolean;
  mobile_app_schemes: string[];
  block_headless: boolean;
  ip_limit: { requests: number; per_seconds: number };
  recipient_daily_limit: number;
  link_domains: string[];
  block_list: { list?: string[]; watch_variable: string | null };
  public_overdraft: boolean;
}

export interface Organization {
  id: string;
  name: string;
  plan: (typeof PLANS)[number];
  credits: number;
  overdraft: number;
  when_out_of_credits: (typeof OUT_OF_CREDIT_MODES)[number];
  hold_queue_limit: number;
  email_verified: boolean;
  suspended: boolean;
  security: Security;
  /** secret_key reads as "********" when set. */
  captcha: { site_key: string; secret_key: string } | null;
  held: number;
  created_at: string;
  updated_at: string;
}

/** The settings a PUT or PATCH sends (what GET shows minus the read-only fields). */
export type OrganizationSettings = Omit<Organization, 'id' | 'held' | 'created_at' | 'updated_at' | 'credits' | 'captcha'> & {
  credits?: number;
  captcha: { site_key?: string; secret_key?: string } | null;
};

/** A PATCH body: any of the settings; `security` merges into the stored one a key at a time. */
export type OrganizationPatch = Partial<Omit<OrganizationSettings, 'security'>> & { security?: Partial<Security> };

export interface TopUpResult {
  credits: number;
  released: string[];
}
