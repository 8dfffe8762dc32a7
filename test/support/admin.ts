import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { ADMIN_TOKEN, type TestApp } from './app.js';

/**
 * The admin API as the tests call it: one call with the token, complete organization bodies,
 * and the organization and send most admin tests start from.
 */

type Method = 'GET' | 'PUT' | 'PATCH' | 'POST' | 'DELETE';

/** One admin call with the right token (or `token`, or none when null). */
export function admin(
  t: TestApp,
  method: Method,
  path: string,
  body?: unknown,
  token: string | null = ADMIN_TOKEN,
): Promise<LightMyRequestResponse> {
  const options: InjectOptions = {
    method,
    url: `/admin/v1${path}`,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  };
  if (body !== undefined) options.payload = body as InjectOptions['payload'];
  return t.app.inject(options);
}

/** Every setting an organization PUT requires, at the values a new organization gets by default. */
export const DEFAULT_SECURITY_BODY = {
  require_private_key: false,
  allow_private_keys_in_browsers: false,
  allowed_origins: [] as string[],
  allow_mobile_apps: false,
  mobile_app_schemes: [] as string[],
  block_headless: false,
  ip_limit: { requests: 10, per_seconds: 60 },
  recipient_daily_limit: 5,
  link_domains: [] as string[],
  block_list: { watch_variable: null as string | null },
  public_overdraft: false,
};
export const ORG_SETTINGS = {
  name: 'Acme',
  plan: 'free',
  overdraft: 0,
  when_out_of_credits: 'hold',
  hold_queue_limit: 1000,
  email_verified: true,
  suspended: false,
  security: DEFAULT_SECURITY_BODY,
  captcha: null,
};

/** A complete organization PUT body: ORG_SETTINGS with `body` over it (`security` merged one level). */
export function orgBody(body: Record<string, unknown> = {}): Record<string, unknown> {
  const security = body.security as Record<string, unknown> | undefined;
  return { ...ORG_SETTINGS, ...body, security: { ...DEFAULT_SECURITY_BODY, ...security } };
}

/** Creates an organization through the API (a complete PUT body from `orgBody`). */
export async function createOrg(t: TestApp, id = 'acme', body: Record<string, unknown> = {}): Promise<void> {
  const res = await admin(t, 'PUT', `/organizations/${id}`, orgBody({ name: id, ...body }));
  expect(res.statusCode, res.body).toBe(201);
}

/** A private-key send of the seeded `contact` template: 202 while the organization, service and template are whole. */
export function sendContact(t: TestApp, privateKey: string): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: '/v1/send',
    headers: { authorization: `Bearer ${privateKey}` },
    payload: { template_id: 'contact', template_params: { name: 'Ann', email: 'ann@example.org', message: 'hi' } },
  });
}
