import { describe, expect, it } from 'vitest';
import type { OrganizationResource } from '../../src/admin/routes/resources.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { DIALECTS, postgresAvailable } from '../support/stores.js';
import { admin, expectError, insertMessage } from './helpers.js';

const pgUp = await postgresAvailable();

describe.each(DIALECTS)('admin organizations on %s', (dialect) => {
  const skip = dialect === 'postgres' && !pgUp;
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => { t = app; });

  it.skipIf(skip)('PUT creates (201), then updates (200) keeping what the body does not name', async () => {
    const created = await admin(t, 'PUT', '/organizations/acme', {
      name: 'Acme',
      plan: 'pro',
      credits: 50,
      when_out_of_credits: 'reject',
      security: { allowed_origins: ['Example.com'], allow_mobile_apps: true, block_list: { list: ['Spam@Bad.test'], watch_variable: 'email' } },
      captcha: { site_key: 'site-key-1', secret_key: 'top-secret-1' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const c = created.json<OrganizationResource>();
    expect(c).toMatchObject({
      id: 'acme', name: 'Acme', plan: 'pro', credits: 50, when_out_of_credits: 'reject', held: 0,
      security: { allowed_origins: ['example.com'], allow_mobile_apps: true, block_list: { list: ['spam@bad.test'], watch_variable: 'email' } },
      captcha: { site_key: 'site-key-1', secret_key: '********' },
      created_at: '2026-01-01T00:00:00.000Z',
    });
    expect(created.body).not.toContain('top-secret-1');

    t.clock.advance(60_000);
    const updated = await admin(t, 'PUT', '/organizations/acme', {
      name: 'Acme Inc',
      credits: 9999,
      security: { block_headless: true, block_list: { list: ['other@bad.test'] } },
    });
    expect(updated.statusCode, updated.body).toBe(200);
    const u = updated.json<OrganizationResource>();
    expect(u.name).toBe('Acme Inc');
    expect(u.credits).toBe(50); // a starting balance only: updates never reset it
    expect(u.plan).toBe('pro');
    expect(u.when_out_of_credits).toBe('reject');
    expect(u.security.allowed_origins).toEqual(['example.com']);
    expect(u.security.allow_mobile_apps).toBe(true);
    expect(u.security.block_headless).toBe(true);
    expect(u.security.block_list).toEqual({ list: ['other@bad.test', 'spam@bad.test'], watch_variable: 'email' });
    expect(u.captcha).toEqual({ site_key: 'site-key-1', secret_key: '********' });
    expect(u.created_at).toBe('2026-01-01T00:00:00.000Z');
    expect(u.updated_at).toBe('2026-01-01T00:01:00.000Z');

    const stored = await t.store.organizations.get('acme');
    expect(stored?.captcha?.secret_key).toBe('top-secret-1');
    expect(stored?.name).toBe('Acme Inc');
  });

  it.skipIf(skip)('sending the masked captcha secret back keeps the stored one; a new one replaces it', async () => {
    await admin(t, 'PUT', '/organizations/acme', { captcha: { site_key: 'site-1', secret_key: 'secret-1' } });
    const same = await admin(t, 'PUT', '/organizations/acme', { captcha: { site_key: 'site-2', secret_key: '********' } });
    expect(same.statusCode, same.body).toBe(200);
    expect((await t.store.organizations.get('acme'))?.captcha).toEqual({ site_key: 'site-2', secret_key: 'secret-1' });
    await admin(t, 'PUT', '/organizations/acme', { captcha: { site_key: 'site-2', secret_key: 'secret-2' } });
    expect((await t.store.organizations.get('acme'))?.captcha?.secret_key).toBe('secret-2');
    await admin(t, 'PUT', '/organizations/acme', { captcha: null });
    expect((await t.store.organizations.get('acme'))?.captcha).toBeNull();
    const masked = await admin(t, 'PUT', '/organizations/acme', { captcha: { site_key: 'site-3', secret_key: '********' } });
    expectError(masked, 400, 'invalid_body');
  });

  it.skipIf(skip)('a GET body sent back as a PUT body changes nothing', async () => {
    await admin(t, 'PUT', '/organizations/acme', {
      name: 'Acme', plan: 'starter', security: { link_domains: ['acme.test'], block_list: { list: ['x@bad.test'], watch_variable: 'to' } },
      captcha: { site_key: 'site-1', secret_key: 'secret-1' },
    });
    const before = await t.store.organizations.get('acme');
    const { id: _id, held: _h, created_at: _c, updated_at: _u, ...editable } = (await admin(t, 'GET', '/organizations/acme')).json<OrganizationResource>();
    t.clock.advance(1000);
    const res = await admin(t, 'PUT', '/organizations/acme', editable);
    expect(res.statusCode, res.body).toBe(200);
    expect(await t.store.organizations.get('acme')).toEqual(before);
  });

  it.skipIf(skip)('GET one and the list show every setting and the number of held messages', async () => {
    await admin(t, 'PUT', '/organizations/beta', { name: 'Beta' });
    await admin(t, 'PUT', '/organizations/acme', { name: 'Acme', credits: 3, hold_queue_limit: 10, suspended: true });
    await insertMessage(t.store, 'acme', 'msg_1', 'held', 1, false);
    await insertMessage(t.store, 'acme', 'msg_2', 'held', 2, false);
    await insertMessage(t.store, 'acme', 'msg_3', 'queued', 3, true);

    const one = await admin(t, 'GET', '/organizations/acme');
    expect(one.statusCode).toBe(200);
    expect(one.json<OrganizationResource>()).toEqual({
      id: 'acme', name: 'Acme', plan: 'free', credits: 3, overdraft: 0, when_out_of_credits: 'hold',
      hold_queue_limit: 10, email_verified: true, suspended: true,
      security: {
        require_private_key: false, allow_private_keys_in_browsers: false, allowed_origins: [], allow_mobile_apps: false,
        block_headless: false, ip_limit: { requests: 10, per_seconds: 60 }, recipient_daily_limit: 5, link_domains: [], mobile_app_schemes: [],
        block_list: { list: [], watch_variable: null }, public_overdraft: false,
      },
      captcha: null,
      held: 2,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    });

    const list = await admin(t, 'GET', '/organizations');
    expect(list.statusCode).toBe(200);
    const items = list.json<{ items: OrganizationResource[] }>().items;
    expect(items.map((o) => [o.id, o.held])).toEqual([['acme', 2], ['beta', 0]]);
  });

  it.skipIf(skip)('an unknown organization is 404 not_found naming it', async () => {
    const err = expectError(await admin(t, 'GET', '/organizations/ghost'), 404, 'not_found');
    expect(err.message).toContain('ghost');
    expectError(await admin(t, 'GET', '/organizations/ghost/keys'), 404, 'not_found');
    expectError(await admin(t, 'GET', '/organizations/ghost/services'), 404, 'not_found');
    expectError(await admin(t, 'GET', '/organizations/ghost/templates'), 404, 'not_found');
    expectError(await admin(t, 'GET', '/organizations/ghost/suppressions'), 404, 'not_found');
    expectError(await admin(t, 'GET', '/organizations/ghost/block-list'), 404, 'not_found');
    expectError(await admin(t, 'POST', '/organizations/ghost/credits', { amount: 1 }), 404, 'not_found');
    expectError(await admin(t, 'POST', '/organizations/ghost/messages/msg_x/release'), 404, 'not_found');
  });

  it.skipIf(skip)('bodies the config file would refuse are 400 invalid_body naming the field', async () => {
    const unknown = expectError(await admin(t, 'PUT', '/organizations/acme', { name: 'A', colour: 'red' }), 400, 'invalid_body');
    expect(unknown.details?.fields?.map((f) => f.field)).toContain('colour');
    const badPlan = expectError(await admin(t, 'PUT', '/organizations/acme', { plan: 'platinum' }), 400, 'invalid_body');
    expect(badPlan.details?.fields?.map((f) => f.field)).toContain('plan');
    const negative = expectError(await admin(t, 'PUT', '/organizations/acme', { credits: -1 }), 400, 'invalid_body');
    expect(negative.details?.fields?.map((f) => f.field)).toContain('credits');
    expectError(await admin(t, 'PUT', '/organizations/not%20an%20id', {}), 400, 'invalid_body');
    expect(await t.store.organizations.list()).toEqual([]);
  });
});
