import { expect, it } from 'vitest';
import type { OrganizationResource } from '../../src/admin/routes/resources.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { PRIVATE_KEY, seedOrg } from '../support/seed.js';
import { admin, DEFAULT_SECURITY_BODY, ORG_SETTINGS, orgBody, sendContact } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { insertMessage } from '../support/db.js';
import { describeDialects } from '../support/dialects.js';

describeDialects('admin organizations on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  it.skipIf(skip)('PUT creates (201), then replaces (200); credits is a starting balance only', async () => {
    const created = await admin(
      t,
      'PUT',
      '/organizations/acme',
      orgBody({
        name: 'Acme',
        plan: 'pro',
        credits: 50,
        when_out_of_credits: 'reject',
        security: {
          allowed_origins: ['Example.com'],
          allow_mobile_apps: true,
          block_list: { list: ['Spam@Bad.test'], watch_variable: 'email' },
        },
        captcha: { site_key: 'site-key-1', secret_key: 'top-secret-1' },
      }),
    );
    expect(created.statusCode, created.body).toBe(201);
    const c = created.json<OrganizationResource>();
    expect(c).toMatchObject({
      id: 'acme',
      name: 'Acme',
      plan: 'pro',
      credits: 50,
      when_out_of_credits: 'reject',
      held: 0,
      security: {
        allowed_origins: ['example.com'],
        allow_mobile_apps: true,
        block_list: { list: ['spam@bad.test'], watch_variable: 'email' },
      },
      captcha: { site_key: 'site-key-1', secret_key: '********' },
      created_at: '2026-01-01T00:00:00.000Z',
    });
    expect(created.body).not.toContain('top-secret-1');

    t.clock.advance(60_000);
    const updated = await admin(
      t,
      'PUT',
      '/organizations/acme',
      orgBody({
        name: 'Acme Inc',
        plan: 'pro',
        credits: 9999,
        security: { block_headless: true, block_list: { list: ['other@bad.test'], watch_variable: null } },
        captcha: { site_key: 'site-key-1', secret_key: '********' },
      }),
    );
    expect(updated.statusCode, updated.body).toBe(200);
    const u = updated.json<OrganizationResource>();
    expect(u.name).toBe('Acme Inc');
    expect(u.credits).toBe(50); // a starting balance only: updates never reset it
    expect(u.when_out_of_credits).toBe('hold'); // a replace: what the body says, not what was stored
    expect(u.security.allowed_origins).toEqual([]);
    expect(u.security.block_headless).toBe(true);
    expect(u.security.block_list).toEqual({ list: ['other@bad.test'], watch_variable: null }); // the list becomes the body's
    expect(u.captcha).toEqual({ site_key: 'site-key-1', secret_key: '********' });
    expect(u.created_at).toBe('2026-01-01T00:00:00.000Z');
    expect(u.updated_at).toBe('2026-01-01T00:01:00.000Z');
    expect((await t.store.organizations.get('acme'))?.captcha?.secret_key).toBe('top-secret-1');
  });

  it.skipIf(skip)('a PUT without block_list.list leaves the block list alone', async () => {
    await admin(
      t,
      'PUT',
      '/organizations/acme',
      orgBody({ security: { block_list: { list: ['a@bad.test'], watch_variable: null } } }),
    );
    await admin(t, 'POST', '/organizations/acme/block-list', { value: 'b@bad.test' });
    const res = await admin(t, 'PUT', '/organizations/acme', orgBody({ name: 'Renamed' }));
    expect(res.statusCode, res.body).toBe(200);
    expect(await t.store.blockList.list('acme')).toEqual(['a@bad.test', 'b@bad.test']);
  });

  it.skipIf(skip)('sending the masked captcha secret back keeps the stored one; a new one replaces it', async () => {
    await admin(t, 'PUT', '/organizations/acme', orgBody({ captcha: { site_key: 'site-1', secret_key: 'secret-1' } }));
    const same = await admin(
      t,
      'PUT',
      '/organizations/acme',
      orgBody({ captcha: { site_key: 'site-2', secret_key: '********' } }),
    );
    expect(same.statusCode, same.body).toBe(200);
    expect((await t.store.organizations.get('acme'))?.captcha).toEqual({ site_key: 'site-2', secret_key: 'secret-1' });
    await admin(t, 'PUT', '/organizations/acme', orgBody({ captcha: { site_key: 'site-2', secret_key: 'secret-2' } }));
    expect((await t.store.organizations.get('acme'))?.captcha?.secret_key).toBe('secret-2');
    await admin(t, 'PUT', '/organizations/acme', orgBody({ captcha: null }));
    expect((await t.store.organizations.get('acme'))?.captcha).toBeNull();
    const masked = await admin(
      t,
      'PUT',
      '/organizations/acme',
      orgBody({ captcha: { site_key: 'site-3', secret_key: '********' } }),
    );
    expectError(masked, 400, 'invalid_body');
  });

  it.skipIf(skip)('a GET body sent back unchanged as a PUT body changes nothing, and the organization still sends', async () => {
    await seedOrg(t.store, {
      plan: 'starter',
      security: {
        allowed_origins: ['example.com'],
        link_domains: ['acme.test'],
        block_list: { list: ['x@bad.test'], watch_variable: 'to' },
      },
      captcha: { site_key: 'site-1', secret_key: 'secret-1' },
    });
    const before = await t.store.organizations.get('acme');
    const shown = (await admin(t, 'GET', '/organizations/acme')).json<OrganizationResource>();
    t.clock.advance(1000);
    const res = await admin(t, 'PUT', '/organizations/acme', shown);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<OrganizationResource>()).toEqual(shown);
    expect(await t.store.organizations.get('acme')).toEqual(before);
    expect(await t.store.blockList.list('acme')).toEqual(['x@bad.test']);
    const sent = await sendContact(t, PRIVATE_KEY);
    expect(sent.statusCode, sent.body).toBe(202);
  });

  it.skipIf(skip)('a PUT lacking any required setting is 400 invalid_body naming it, and nothing changes', async () => {
    await admin(t, 'PUT', '/organizations/acme', orgBody({ name: 'Acme', plan: 'pro' }));
    const before = await t.store.organizations.get('acme');
    for (const field of Object.keys(ORG_SETTINGS)) {
      const body: Record<string, unknown> = orgBody();
      delete body[field];
      const err = expectError(await admin(t, 'PUT', '/organizations/acme', body), 400, 'invalid_body');
      expect(
        err.details?.fields?.map((f) => f.field),
        field,
      ).toEqual([field]);
    }
    for (const field of Object.keys(DEFAULT_SECURITY_BODY)) {
      const security: Record<string, unknown> = { ...DEFAULT_SECURITY_BODY };
      delete security[field];
      const err = expectError(await admin(t, 'PUT', '/organizations/acme', { ...ORG_SETTINGS, security }), 400, 'invalid_body');
      expect(
        err.details?.fields?.map((f) => f.field),
        field,
      ).toEqual([`security.${field}`]);
    }
    const noWatch = expectError(
      await admin(t, 'PUT', '/organizations/acme', orgBody({ security: { block_list: {} } })),
      400,
      'invalid_body',
    );
    expect(noWatch.details?.fields?.map((f) => f.field)).toEqual(['security.block_list.watch_variable']);
    const empty = expectError(await admin(t, 'PUT', '/organizations/beta', {}), 400, 'invalid_body');
    expect(empty.details?.fields?.map((f) => f.field)).toEqual(expect.arrayContaining(['name', 'plan', 'security', 'captcha']));
    expect(await t.store.organizations.get('acme')).toEqual(before);
    expect(await t.store.organizations.get('beta')).toBeUndefined();
  });

  it.skipIf(skip)('read-only fields are ignored, but an id naming another organization is refused', async () => {
    await admin(t, 'PUT', '/organizations/acme', orgBody());
    const ok = await admin(
      t,
      'PUT',
      '/organizations/acme',
      orgBody({
        id: 'acme',
        held: 99,
        credits: 5,
        created_at: '2000-01-01T00:00:00.000Z',
        updated_at: '2000-01-01T00:00:00.000Z',
      }),
    );
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json<OrganizationResource>()).toMatchObject({ held: 0, credits: 0, created_at: '2026-01-01T00:00:00.000Z' });
    const other = expectError(
      await admin(t, 'PUT', '/organizations/acme', orgBody({ id: 'beta', name: 'Stolen' })),
      400,
      'invalid_body',
    );
    expect(other.details?.fields?.map((f) => f.field)).toEqual(['id']);
    expect((await t.store.organizations.get('acme'))?.name).toBe('Acme');
  });

  it.skipIf(skip)(
    'PATCH changes only what it names; security and captcha merge one level, deeper objects are replaced',
    async () => {
      await admin(
        t,
        'PUT',
        '/organizations/acme',
        orgBody({
          name: 'Acme',
          plan: 'pro',
          credits: 7,
          security: {
            allowed_origins: ['example.com'],
            ip_limit: { requests: 30, per_seconds: 10 },
            block_list: { list: ['x@bad.test'], watch_variable: 'email' },
          },
          captcha: { site_key: 'site-1', secret_key: 'secret-1' },
        }),
      );
      const before = (await admin(t, 'GET', '/organizations/acme')).json<OrganizationResource>();
      t.clock.advance(1000);

      const renamed = await admin(t, 'PATCH', '/organizations/acme', { name: 'Acme Inc' });
      expect(renamed.statusCode, renamed.body).toBe(200);
      expect(renamed.json<OrganizationResource>()).toEqual({
        ...before,
        name: 'Acme Inc',
        updated_at: '2026-01-01T00:00:01.000Z',
      });

      const sec = await admin(t, 'PATCH', '/organizations/acme', {
        security: { block_headless: true, ip_limit: { requests: 5, per_seconds: 60 } },
      });
      expect(sec.statusCode, sec.body).toBe(200);
      expect(sec.json<OrganizationResource>().security).toEqual({
        ...before.security,
        block_headless: true,
        ip_limit: { requests: 5, per_seconds: 60 },
      });

      const site = await admin(t, 'PATCH', '/organizations/acme', { captcha: { site_key: 'site-2' } });
      expect(site.statusCode, site.body).toBe(200);
      expect((await t.store.organizations.get('acme'))?.captcha).toEqual({ site_key: 'site-2', secret_key: 'secret-1' });

      const watch = await admin(t, 'PATCH', '/organizations/acme', { security: { block_list: { watch_variable: null } } });
      expect(watch.json<OrganizationResource>().security.block_list).toEqual({ list: ['x@bad.test'], watch_variable: null });
      expect((await t.store.organizations.get('acme'))?.credits).toBe(7);
    },
  );

  it.skipIf(skip)(
    'PATCH with an unknown or read-only field, or an incomplete new captcha, is 400; a missing organization is 404',
    async () => {
      await admin(t, 'PUT', '/organizations/acme', orgBody());
      const before = await t.store.organizations.get('acme');
      const unknown = expectError(
        await admin(t, 'PATCH', '/organizations/acme', { name: 'A', colour: 'red' }),
        400,
        'invalid_body',
      );
      expect(unknown.details?.fields?.map((f) => f.field)).toEqual(['colour']);
      const nested = expectError(
        await admin(t, 'PATCH', '/organizations/acme', { security: { colour: 'red' } }),
        400,
        'invalid_body',
      );
      expect(nested.details?.fields?.map((f) => f.field)).toEqual(['security.colour']);
      expectError(await admin(t, 'PATCH', '/organizations/acme', { credits: 5 }), 400, 'invalid_body');
      const captcha = expectError(
        await admin(t, 'PATCH', '/organizations/acme', { captcha: { site_key: 's' } }),
        400,
        'invalid_body',
      );
      expect(captcha.details?.fields?.map((f) => f.field)).toEqual(['captcha.secret_key']);
      expect(await t.store.organizations.get('acme')).toEqual(before);
      expectError(await admin(t, 'PATCH', '/organizations/ghost', { name: 'Ghost' }), 404, 'not_found');
      expect(await t.store.organizations.get('ghost')).toBeUndefined();
    },
  );

  it.skipIf(skip)(
    'mobile_app_schemes: an app scheme is stored; schemes a browser ' +
      'runs itself (javascript, data, https…) are 400 naming the field',
    async () => {
      await admin(t, 'PUT', '/organizations/acme', orgBody());
      const ok = await admin(t, 'PATCH', '/organizations/acme', { security: { mobile_app_schemes: ['myapp', 'com.acme.app'] } });
      expect(ok.statusCode, ok.body).toBe(200);
      expect(ok.json<OrganizationResource>().security.mobile_app_schemes).toEqual(['myapp', 'com.acme.app']);
      for (const scheme of ['javascript', 'data', 'vbscript', 'https', 'file', 'blob', 'chrome-extension', 'JavaScript', 'x']) {
        const bad = expectError(
          await admin(t, 'PATCH', '/organizations/acme', { security: { mobile_app_schemes: [scheme] } }),
          400,
          'invalid_body',
        );
        expect(
          bad.details?.fields?.map((f) => f.field),
          scheme,
        ).toEqual(['security.mobile_app_schemes.0']);
      }
      // Lookalikes that merely start with a refused name are ordinary app schemes.
      const lookalike = await admin(t, 'PATCH', '/organizations/acme', {
        security: { mobile_app_schemes: ['javascriptapp', 'datax'] },
      });
      expect(lookalike.statusCode, lookalike.body).toBe(200);
    },
  );

  it.skipIf(skip)('GET one and the list show every setting and the number of held messages', async () => {
    await admin(t, 'PUT', '/organizations/beta', orgBody({ name: 'Beta' }));
    await admin(t, 'PUT', '/organizations/acme', orgBody({ name: 'Acme', credits: 3, hold_queue_limit: 10, suspended: true }));
    await insertMessage(t.store, 'acme', 'msg_1', 'held', 1, false);
    await insertMessage(t.store, 'acme', 'msg_2', 'held', 2, false);
    await insertMessage(t.store, 'acme', 'msg_3', 'queued', 3, true);

    const one = await admin(t, 'GET', '/organizations/acme');
    expect(one.statusCode).toBe(200);
    expect(one.json<OrganizationResource>()).toEqual({
      id: 'acme',
      name: 'Acme',
      plan: 'free',
      credits: 3,
      overdraft: 0,
      when_out_of_credits: 'hold',
      hold_queue_limit: 10,
      email_verified: true,
      suspended: true,
      security: {
        require_private_key: false,
        allow_private_keys_in_browsers: false,
        allowed_origins: [],
        allow_mobile_apps: false,
        block_headless: false,
        ip_limit: { requests: 10, per_seconds: 60 },
        recipient_daily_limit: 5,
        link_domains: [],
        mobile_app_schemes: [],
        block_list: { list: [], watch_variable: null },
        public_overdraft: false,
      },
      captcha: null,
      held: 2,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    });

    const list = await admin(t, 'GET', '/organizations');
    expect(list.statusCode).toBe(200);
    const items = list.json<{ items: OrganizationResource[] }>().items;
    expect(items.map((o) => [o.id, o.held])).toEqual([
      ['acme', 2],
      ['beta', 0],
    ]);
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
    const unknown = expectError(await admin(t, 'PUT', '/organizations/acme', orgBody({ colour: 'red' })), 400, 'invalid_body');
    expect(unknown.details?.fields?.map((f) => f.field)).toEqual(['colour']);
    const badPlan = expectError(await admin(t, 'PUT', '/organizations/acme', orgBody({ plan: 'platinum' })), 400, 'invalid_body');
    expect(badPlan.details?.fields?.map((f) => f.field)).toContain('plan');
    const negative = expectError(await admin(t, 'PUT', '/organizations/acme', orgBody({ credits: -1 })), 400, 'invalid_body');
    expect(negative.details?.fields?.map((f) => f.field)).toContain('credits');
    expectError(await admin(t, 'PUT', '/organizations/not%20an%20id', orgBody()), 400, 'invalid_body');
    expect(await t.store.organizations.list()).toEqual([]);
  });
});
