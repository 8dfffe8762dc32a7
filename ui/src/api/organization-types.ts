/**
 * Organizations and credits as the admin API shows them (src/admin/routes/organizations.ts, credits.ts),
 * generated (./shapes.ts); no DOM, shared with unit tests.
 */
import { allOf, type Answer, type RequestBody } from './shapes.js';

type Org = '/organizations/{org}';
type Patch = RequestBody<Org, 'patch'>;

/** `captcha.secret_key` reads "********" when set. */
export type Organization = Answer<Org, 'get'>;
export type Security = Organization['security'];

/**
 * The settings the form sends: a PUT's body (what GET shows minus the read-only fields), its `captcha` as a
 * PATCH takes it, for the form builds both and a PATCH that leaves the secret out keeps the stored one.
 */
export type OrganizationSettings = Omit<RequestBody<Org, 'put'>, 'captcha'> & { captcha: Exclude<Patch['captcha'], undefined> };

/** A PATCH body: any of the settings; `security` merges into the stored one a key at a time. */
export type OrganizationPatch = Patch;

export type TopUpResult = Answer<'/organizations/{org}/credits', 'post'>;

export const PLANS = allOf<Organization['plan']>()(['free', 'starter', 'pro', 'business_50k', 'business_100k', 'business_200k']);
export const OUT_OF_CREDIT_MODES = allOf<Organization['when_out_of_credits']>()(['hold', 'reject']);
