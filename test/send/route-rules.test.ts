import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/apply.js';
import { freshAppAll, type TestApp } from '../support/app.js';
import { expectError, expectLimited } from '../support/http.js';
import { org, pkOf, skOf, type OrgInput, type SecurityInput } from '../support/orgs.js';
import { CONTACT_TEMPLATE } from '../support/seed.js';
import { CONTACT_PARAMS } from '../support/send.js';
import { messageCount } from '../support/stored.js';
import { describeDialects } from '../support/dialects.js';

/**
 * The key, origin, flood-guard and per-IP rules (spec: Authentication rules 2–6, Limits 2–3)
 * over every send-like route (both send calls, their EmailJS aliases, the batch and uploads),
 * from one table, so that a rule cannot hold on one route and not
 * on another. Where a route differs on purpose, the difference is a field of its row.
 */

interface Route {
  name: string;
  /** Path segment for the organizations of this route (each route has its own counters). */
  slug: string;
  /** The request this route accepts, sent with the caller's `headers`. */
  request(headers: Record<string, string>): InjectOptions;
  /** Asserts the answer to an accepted request. */
  accepted(res: LightMyRequestResponse): void;
  /** False: public keys are refused 403 private_key_required before any other rule (rule 3). */
  publicKeys: boolean;
}

const BOUNDARY = 'route-rules-boundary';

/** The contact template's fields as multipart/form-data (what EmailJS's sendForm posts). */
function formBody(fields: Record<string, string>): string {
  const parts = Object.entries(fields).map(
    ([k, v]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`,
  );
  return `${parts.join('')}--${BOUNDARY}--\r\n`;
}

const sendJson = { template_id: 'contact', template_params: CONTACT_PARAMS };

const json202 = (res: LightMyRequestResponse): void => {
  expect(res.statusCode, res.body).toBe(202);
  expect(res.json<{ status: string }>().status).toBe('queued');
};

/** The aliases answer a legacy client (no X-Mail-Client, no Accept: application/json) 200 text/plain OK. */
const legacyOk = (res: LightMyRequestResponse): void => {
  expect(res.statusCode, res.body).toBe(200);
  expect(res.body).toBe('OK');
  expect(res.headers['x-mail-status']).toBe('queued');
};

const ROUTES: Route[] = [
  {
    name: 'POST /v1/send',
    slug: 'send',
    request: (headers) => ({ method: 'POST', url: '/v1/send', headers, payload: sendJson }),
    accepted: json202,
    publicKeys: true,
  },
  {
    name: 'POST /api/v1.0/email/send (alias)',
    slug: 'alias',
    request: (headers) => ({ method: 'POST', url: '/api/v1.0/email/send', headers, payload: sendJson }),
    accepted: legacyOk,
    publicKeys: true,
  },
  {
    name: 'POST /v1/send-form',
    slug: 'form',
    request: (headers) => ({
      method: 'POST',
      url: '/v1/send-form',
      headers: { ...headers, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      payload: formBody({ template_id: 'contact', ...CONTACT_PARAMS }),
    }),
    accepted: json202,
    publicKeys: true,
  },
  {
    name: 'POST /api/v1.0/email/send-form (alias)',
    slug: 'formalias',
    request: (headers) => ({
      method: 'POST',
      url: '/api/v1.0/email/send-form',
      headers: { ...headers, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      payload: formBody({ template_id: 'contact', ...CONTACT_PARAMS }),
    }),
    accepted: legacyOk,
    publicKeys: true,
  },
  {
    name: 'POST /v1/send-batch',
    slug: 'batch',
    request: (headers) => ({ method: 'POST', url: '/v1/send-batch', headers, payload: { messages: [sendJson] } }),
    // The batch answers 200 with one result per item; the item is what was accepted.
    accepted: (res) => {
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json<{ results: Array<{ status: string }> }>().results.map((r) => r.status)).toEqual(['queued']);
    },
    // Private key only (spec, Endpoints): a public key never reaches the origin rules or the limits.
    publicKeys: false,
  },
  {
    name: 'POST /v1/uploads',
    slug: 'uploads',
    // No template here: an upload names a file, and the organization has a template that takes files.
    request: (headers) => ({
      method: 'POST',
      url: '/v1/uploads',
      headers,
      payload: { filename: 'notes.txt', content_type: 'text/plain', size: 12 },
    }),
    accepted: (res) => {
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json<{ upload_id: string }>().upload_id).toEqual(expect.any(String));
    },
    publicKeys: true,
    // Limits rule 2 covers every public-key request, uploads included (this suite found they were
    // not counted). Plan and key limits count sends only (rule 3), so uploads stay out of those.
  },
];

const ORIGIN = 'https://example.com';
const IP_LIMIT = 3;

/** Organizations of one route: `<slug>` plus one per organization setting under test. */
function routeOrgs(slug: string): OrgInput[] {
  // Pro: its flood guard is the spec's 50 per second (2 × 20 is less), and it allows attachments.
  const make = (suffix: string, security: SecurityInput = {}): OrgInput =>
    org(
      `${slug}${suffix}`,
      {
        plan: 'pro',
        templates: [CONTACT_TEMPLATE, { ...CONTACT_TEMPLATE, id: 'files', allow_attachments: true }],
      },
      security,
    );
  return [
    make(''),
    make('-nomobile', { allow_mobile_apps: false }),
    make('-privonly', { require_private_key: true }),
    make('-browser', { allow_private_keys_in_browsers: true }),
    make('-ip', { ip_limit: { requests: IP_LIMIT, per_seconds: 60 } }),
  ];
}

const pub = (id: string, extra: Record<string, string> = {}) => ({ 'x-mail-public-key': pkOf(id), origin: ORIGIN, ...extra });
const priv = (id: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${skOf(id)}`, ...extra });

describeDialects('key, origin, flood-guard and per-IP rules on every send-like route on %s', (dialect, skip) => {
  let t: TestApp;

  freshAppAll(dialect, skip, async (app) => {
    t = app;
    await applyConfig(t.store, { organizations: ROUTES.flatMap((r) => routeOrgs(r.slug)) });
  });
  // Every test starts in a fresh minute: no window of an earlier test is still open.
  afterEach(() => {
    if (!skip) t.clock.set((Math.floor(t.clock.now() / 60_000) + 1) * 60_000);
  });

  const call = (route: Route, headers: Record<string, string>, remoteAddress?: string) =>
    t.app.inject({ ...route.request(headers), ...(remoteAddress === undefined ? {} : { remoteAddress }) });

  /** A refusal that stored nothing. */
  async function refused(route: Route, headers: Record<string, string>, status: number, code: string, orgId = route.slug) {
    const before = await messageCount(t, orgId);
    const err = expectError(await call(route, headers), status, code);
    expect(await messageCount(t, orgId)).toBe(before);
    return err;
  }

  /** What a public-key request gets where public keys are refused outright, else `status`/`code`. */
  const publicRefusal = (route: Route, status: number, code: string): [number, string] =>
    route.publicKeys ? [status, code] : [403, 'private_key_required'];

  describe.each(ROUTES)('$name', (route) => {
    const id = route.slug;

    it.skipIf(skip)(
      'rule 2: no key is 401 unauthorized; an unknown public or private key is 401 invalid_public_key / invalid_private_key',
      async () => {
        await refused(route, {}, 401, 'unauthorized');
        await refused(route, { 'x-mail-public-key': 'pk_nobody_public_1', origin: ORIGIN }, 401, 'invalid_public_key');
        await refused(route, { authorization: 'Bearer sk_nobody_private_1' }, 401, 'invalid_private_key');
      },
    );

    it.skipIf(skip)('a private key from a server is accepted', async () => {
      route.accepted(await call(route, priv(id)));
    });

    it.skipIf(skip)(
      'rule 4: a private key with an Origin is 403 private_key_in_browser, unless the organization allows it',
      async () => {
        await refused(route, priv(id, { origin: ORIGIN }), 403, 'private_key_in_browser');
        route.accepted(await call(route, priv(`${id}-browser`, { origin: ORIGIN })));
      },
    );

    it.skipIf(skip)(
      'rule 5: a public key from an allowed origin (Origin or Referer) is accepted; another origin is 403 origin_not_allowed',
      async () => {
        if (route.publicKeys) {
          route.accepted(await call(route, pub(id)));
          route.accepted(await call(route, { 'x-mail-public-key': pkOf(id), referer: `${ORIGIN}/contact` }));
        } else {
          await refused(route, pub(id), 403, 'private_key_required');
        }
        const [status, code] = publicRefusal(route, 403, 'origin_not_allowed');
        await refused(route, pub(id, { origin: 'https://evil.test' }), status, code);
        await refused(route, { 'x-mail-public-key': pkOf(id), referer: 'https://evil.test/page' }, status, code);
      },
    );

    it.skipIf(skip)(
      'rule 6: a public key with neither Origin nor Referer needs ' +
        '"allow mobile apps" (else 403 origin_not_allowed, reason no_origin)',
      async () => {
        const bare = (org: string) => ({ 'x-mail-public-key': pkOf(org) });
        if (route.publicKeys) route.accepted(await call(route, bare(id)));
        else await refused(route, bare(id), 403, 'private_key_required');
        const [status, code] = publicRefusal(route, 403, 'origin_not_allowed');
        const err = await refused(route, bare(`${id}-nomobile`), status, code, `${id}-nomobile`);
        if (route.publicKeys) expect(err.details?.reason).toBe('no_origin');
      },
    );

    it.skipIf(skip)(
      'rule 3: an organization that requires a private key refuses public keys 403 private_key_required, and takes private ones',
      async () => {
        await refused(route, pub(`${id}-privonly`), 403, 'private_key_required', `${id}-privonly`);
        route.accepted(await call(route, priv(`${id}-privonly`)));
      },
    );

    it.skipIf(skip)(
      'limits rule 3: the 51st public-key request of an organization ' +
        'in one second is 429 flood, failing or not; private keys pass',
      async () => {
        // 50 requests refused by the origin rule: they meet the flood guard and nothing else.
        const [status, code] = publicRefusal(route, 403, 'origin_not_allowed');
        for (let i = 0; i < 50; i++) expectError(await call(route, pub(id, { origin: 'https://evil.test' })), status, code);
        if (route.publicKeys) expectLimited(await call(route, pub(id)), 'flood');
        else expectError(await call(route, pub(id)), 403, 'private_key_required');
        route.accepted(await call(route, priv(id)));
        t.clock.advance(1000);
        if (route.publicKeys) route.accepted(await call(route, pub(id)));
      },
    );

    it.skipIf(skip)(
      `limits rule 2: ${IP_LIMIT} public-key requests per client address in 60 s on ` +
        `every route that takes public keys; private keys are not counted per address`,
      async () => {
        const org = `${id}-ip`;
        if (!route.publicKeys) {
          await refused(route, pub(org), 403, 'private_key_required', org);
        } else {
          for (let i = 0; i < IP_LIMIT; i++) route.accepted(await call(route, pub(org)));
          expect(expectLimited(await call(route, pub(org)), 'ip')).toBe(60);
          // Another address is another client.
          route.accepted(await call(route, pub(org), '198.51.100.7'));
        }
        for (let i = 0; i < IP_LIMIT + 1; i++) route.accepted(await call(route, priv(org)));
      },
    );
  });

  describe('counters shared by the routes', () => {
    const publicRoutes = ROUTES.filter((r) => r.publicKeys);

    it.skipIf(skip)("the flood guard counts an organization's public-key requests on every route together", async () => {
      for (let i = 0; i < 50; i++) {
        const route = publicRoutes[i % publicRoutes.length];
        if (route !== undefined)
          expectError(await call(route, pub('send', { origin: 'https://evil.test' })), 403, 'origin_not_allowed');
      }
      for (const route of publicRoutes) expectLimited(await call(route, pub('send')), 'flood');
    });

    it.skipIf(skip)('the per-IP limit counts public-key requests on every route together', async () => {
      for (let i = 0; i < IP_LIMIT; i++) {
        const route = publicRoutes[i % publicRoutes.length];
        if (route !== undefined) route.accepted(await call(route, pub('send-ip')));
      }
      for (const route of publicRoutes) expectLimited(await call(route, pub('send-ip')), 'ip');
    });
  });
});
