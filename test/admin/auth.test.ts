import { expect, it } from 'vitest';
import { ADMIN_TOKEN, freshAppEach, type TestApp } from '../support/app.js';
import { PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { admin } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { describeDialects } from '../support/dialects.js';

interface OpenApiDoc {
  paths: Record<string, Record<string, { tags?: string[]; security?: Array<Record<string, string[]>>; requestBody?: unknown }>>;
}

describeDialects('admin API access on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  it.skipIf(skip)('401 unauthorized without a token, with a wrong one and with a malformed header', async () => {
    await seedOrg(t.store);
    const none = await admin(t, 'GET', '/organizations', undefined, null);
    expectError(none, 401, 'unauthorized');
    expect(none.headers['www-authenticate']).toContain('Bearer');
    expectError(await admin(t, 'GET', '/organizations/acme', undefined, `${ADMIN_TOKEN}x`), 401, 'unauthorized');
    expectError(await admin(t, 'GET', '/organizations/acme', undefined, ADMIN_TOKEN.slice(0, -1)), 401, 'unauthorized');
    const basic = await t.app.inject({
      method: 'GET',
      url: '/admin/v1/organizations',
      headers: { authorization: `Basic ${ADMIN_TOKEN}` },
    });
    expectError(basic, 401, 'unauthorized');
    // The right token passes, so the 401s above are about the token and nothing else.
    expect((await admin(t, 'GET', '/organizations/acme')).statusCode).toBe(200);
  });

  it.skipIf(skip)('API keys are not admin credentials', async () => {
    await seedOrg(t.store);
    expectError(await admin(t, 'GET', '/organizations/acme', undefined, PRIVATE_KEY), 401, 'unauthorized');
    const withPublic = await t.app.inject({
      method: 'GET',
      url: '/admin/v1/organizations/acme',
      headers: { 'x-mail-public-key': PUBLIC_KEY },
    });
    expectError(withPublic, 401, 'unauthorized');
  });

  it.skipIf(skip)('a bad body without a token is a 401, and changes nothing', async () => {
    const res = await admin(t, 'PUT', '/organizations/new-org', { name: 'New', nonsense: true }, null);
    expectError(res, 401, 'unauthorized');
    expect(await t.store.organizations.get('new-org')).toBeUndefined();
    const valid = await admin(t, 'PUT', '/organizations/new-org', { name: 'New' }, 'wrong-token-wrong-token');
    expectError(valid, 401, 'unauthorized');
    expect(await t.store.organizations.get('new-org')).toBeUndefined();
  });

  it.skipIf(skip)('the admin routes are in the OpenAPI document, tagged and secured', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json<OpenApiDoc>();
    const expected: Array<[string, string]> = [
      ['/admin/v1/organizations', 'get'],
      ['/admin/v1/organizations/{org}', 'get'],
      ['/admin/v1/organizations/{org}', 'put'],
      ['/admin/v1/organizations/{org}/keys', 'post'],
      ['/admin/v1/organizations/{org}/keys/{keyId}/rotate', 'post'],
      ['/admin/v1/organizations/{org}/keys/{keyId}', 'delete'],
      ['/admin/v1/organizations/{org}/services/{id}', 'put'],
      ['/admin/v1/organizations/{org}/templates/{id}', 'put'],
      ['/admin/v1/organizations/{org}/credits', 'post'],
      ['/admin/v1/organizations/{org}/suppressions/{email}', 'delete'],
      ['/admin/v1/organizations/{org}/block-list', 'post'],
      ['/admin/v1/organizations/{org}/messages/{id}/release', 'post'],
      ['/admin/v1/organizations/{org}/messages/{id}/cancel', 'post'],
    ];
    for (const [path, method] of expected) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method.toUpperCase()} ${path}`).toBeDefined();
      expect(op?.tags).toEqual(['admin']);
      expect(op?.security).toEqual([{ adminToken: [] }, { adminSession: [] }]);
    }
    expect(doc.paths['/admin/v1/organizations/{org}']?.put?.requestBody).toBeDefined();
  });
});

describeDialects('admin API switched off on %s', (dialect, skip) => {
  let t: TestApp;
  freshAppEach(
    dialect,
    skip,
    (app) => {
      t = app;
    },
    { MAILROOM_ADMIN_TOKEN: '' },
  );

  it.skipIf(skip)('every /admin/v1 URL is 404 not_found, whatever the token', async () => {
    expect(t.config.adminToken).toBeUndefined();
    await seedOrg(t.store);
    expectError(await admin(t, 'GET', '/organizations'), 404, 'not_found');
    expectError(await admin(t, 'GET', '/organizations/acme', undefined, null), 404, 'not_found');
    expectError(await admin(t, 'PUT', '/organizations/other', { name: 'Other' }), 404, 'not_found');
    expectError(await admin(t, 'POST', '/organizations/acme/credits', { amount: 5 }), 404, 'not_found');
    expectError(await admin(t, 'DELETE', '/organizations/acme/keys/key_x'), 404, 'not_found');
    expect(await t.store.organizations.get('other')).toBeUndefined();
    expect((await t.store.organizations.get('acme'))?.credits).toBe(100);
  });

  it.skipIf(skip)('the OpenAPI document does not advertise it', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<OpenApiDoc>();
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/admin/'))).toEqual([]);
    expect(doc.paths['/v1/templates']).toBeDefined();
  });
});
