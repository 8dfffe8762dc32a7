import { expect, it } from 'vitest';
import { freshAppAll, type TestApp } from '../support/app.js';
import { PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { describeDialects } from '../support/dialects.js';

describeDialects('GET /v1/templates on %s', (dialect, skip) => {
  let t: TestApp;
  freshAppAll(dialect, skip, async (app) => {
    t = app;
    await seedOrg(t.store);
    await seedOrg(t.store, {
      id: 'browserco',
      security: { allow_private_keys_in_browsers: true },
      keys: [{ type: 'private', key: 'sk_browserco_private_1' }],
      templates: [],
    });
  });

  const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

  it.skipIf(skip)('lists templates with parameter schemas for a private key', async () => {
    const res = await get('/v1/templates', bearer(PRIVATE_KEY));
    expect(res.statusCode).toBe(200);
    const body = res.json() as { items: Array<{ id: string; params: Array<{ name: string; type: string }> }> };
    expect(body.items.map((i) => i.id)).toEqual(['contact']);
    expect(body.items[0]?.params.map((p) => p.type)).toEqual(['string', 'email', 'string']);
  });

  it.skipIf(skip)('returns one template, 404 template_not_found for another id', async () => {
    const one = await get('/v1/templates/contact', bearer(PRIVATE_KEY));
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({ id: 'contact', content: { subject: 'Message from {{name}}' }, strict_params: true });
    const none = await get('/v1/templates/nope', bearer(PRIVATE_KEY));
    expect(none.statusCode).toBe(404);
    expect(none.json().error.code).toBe('template_not_found');
    // Another organization's template is not visible.
    const foreign = await get('/v1/templates/contact', bearer('sk_browserco_private_1'));
    expect(foreign.json().error.code).toBe('template_not_found');
    // A NUL names no template (PostgreSQL refused to look it up: a 500).
    const nul = await get('/v1/templates/con%00tact', bearer(PRIVATE_KEY));
    expect(nul.statusCode).toBe(404);
    expect(nul.json().error.code).toBe('template_not_found');
  });

  it.skipIf(skip)('401 variants per Authentication rule 2', async () => {
    expect((await get('/v1/templates')).json().error.code).toBe('unauthorized');
    expect((await get('/v1/templates', bearer('sk_unknown_key_999'))).json().error.code).toBe('invalid_private_key');
    expect((await get('/v1/templates', { 'x-mail-public-key': 'pk_unknown_key_999' })).json().error.code).toBe(
      'invalid_public_key',
    );
    expect((await get('/v1/templates', bearer('garbage'))).json().error.code).toBe('unauthorized');
    expect((await get('/v1/templates', bearer('garbage'))).statusCode).toBe(401);
  });

  it.skipIf(skip)('403 private_key_required for a public key', async () => {
    const res = await get('/v1/templates', { 'x-mail-public-key': PUBLIC_KEY });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('private_key_required');
    expect((await get('/v1/templates/contact', { 'x-mail-public-key': PUBLIC_KEY })).json().error.code).toBe(
      'private_key_required',
    );
  });

  it.skipIf(skip)('403 private_key_in_browser with an Origin, unless the organization allows it', async () => {
    const res = await get('/v1/templates', { ...bearer(PRIVATE_KEY), origin: 'https://example.com' });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('private_key_in_browser');
    const allowed = await get('/v1/templates', { ...bearer('sk_browserco_private_1'), origin: 'https://example.com' });
    expect(allowed.statusCode).toBe(200);
  });
});
