import { expect, it } from 'vitest';
import { openStore } from '../../src/storage/store.js';
import { buildTestApp, freshAppEach, testConfig, type TestApp } from '../support/app.js';
import { PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { admin } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { describeDialects } from '../support/dialects.js';

interface KeyBody {
  id: string;
  type: 'public' | 'private';
  hint: string;
  public_key: string | null;
  status: string;
  created_at: string;
  revoked_at: string | null;
  expires_at: string | null;
  key?: string;
  previous_key?: { id: string; expires_at: string };
}

describeDialects('admin keys on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  const listTemplates = (key: string) =>
    t.app.inject({ method: 'GET', url: '/v1/templates', headers: { authorization: `Bearer ${key}` } });

  it.skipIf(skip)('POST creates a key whose value appears once; the list never shows a private value', async () => {
    await seedOrg(t.store);
    const res = await admin(t, 'POST', '/organizations/acme/keys', { type: 'private' });
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json<KeyBody>();
    expect(created.key).toMatch(/^sk_/);
    expect(created).toMatchObject({
      type: 'private',
      status: 'active',
      public_key: null,
      revoked_at: null,
      created_at: '2026-01-01T00:00:00.000Z',
    });
    expect(created.hint).toBe(`sk_…${created.key?.slice(-4)}`);
    expect((await listTemplates(created.key ?? '')).statusCode).toBe(200);
    // The use is written off the request's path (issue 29): wait for it, then the list shows it.
    await t.store.keyUse.idle();

    const list = await admin(t, 'GET', '/organizations/acme/keys');
    expect(list.statusCode).toBe(200);
    const items = list.json<{ items: KeyBody[] }>().items;
    expect(items).toHaveLength(3);
    expect(items.find((k) => k.id === created.id)).toEqual({ ...created, key: undefined, last_used_at: created.created_at });
    expect(list.body).not.toContain(created.key);
    expect(list.body).not.toContain(PRIVATE_KEY);
    expect(items.find((k) => k.type === 'public')?.public_key).toBe(PUBLIC_KEY);
  });

  it.skipIf(skip)('a given value is kept; a wrong prefix or a value in use is refused', async () => {
    await seedOrg(t.store);
    const given = await admin(t, 'POST', '/organizations/acme/keys', { type: 'public', key: 'pk_chosen_value_1' });
    expect(given.statusCode, given.body).toBe(201);
    expect(given.json<KeyBody>()).toMatchObject({ key: 'pk_chosen_value_1', public_key: 'pk_chosen_value_1' });
    const wrong = expectError(
      await admin(t, 'POST', '/organizations/acme/keys', { type: 'private', key: 'pk_chosen_value_2' }),
      400,
      'invalid_body',
    );
    expect(wrong.details?.fields?.[0]?.field).toBe('key');
    expectError(
      await admin(t, 'POST', '/organizations/acme/keys', { type: 'public', key: 'pk_chosen_value_1' }),
      409,
      'conflict',
    );
    expectError(await admin(t, 'POST', '/organizations/acme/keys', { type: 'secret' }), 400, 'invalid_body');
    expectError(await admin(t, 'POST', '/organizations/ghost/keys', { type: 'public' }), 404, 'not_found');
  });

  it.skipIf(skip)('rotate: the old key stops working at once, the new one works', async () => {
    await seedOrg(t.store);
    const old = (await t.store.keys.findByValue(PRIVATE_KEY))?.id ?? '';
    expect((await listTemplates(PRIVATE_KEY)).statusCode).toBe(200);

    t.clock.advance(1000);
    const res = await admin(t, 'POST', `/organizations/acme/keys/${old}/rotate`);
    expect(res.statusCode, res.body).toBe(201);
    const rotated = res.json<KeyBody>();
    expect(rotated.id).not.toBe(old);
    expect(rotated.type).toBe('private');
    expect(rotated.key).toMatch(/^sk_/);
    expect(rotated.key).not.toBe(PRIVATE_KEY);

    expectError(await listTemplates(PRIVATE_KEY), 401, 'invalid_private_key');
    expect((await listTemplates(rotated.key ?? '')).statusCode).toBe(200);

    const items = (await admin(t, 'GET', '/organizations/acme/keys')).json<{ items: KeyBody[] }>().items;
    expect(items.find((k) => k.id === old)).toMatchObject({ status: 'rotated', revoked_at: '2026-01-01T00:00:01.000Z' });
    // A rotated key cannot be rotated again: there would be two successors.
    expectError(await admin(t, 'POST', `/organizations/acme/keys/${old}/rotate`), 409, 'conflict');
    expectError(await admin(t, 'POST', '/organizations/acme/keys/key_nope/rotate'), 404, 'not_found');
  });

  it.skipIf(skip)('DELETE revokes: 204, then the key is refused', async () => {
    await seedOrg(t.store);
    const id = (await t.store.keys.findByValue(PRIVATE_KEY))?.id ?? '';
    const res = await admin(t, 'DELETE', `/organizations/acme/keys/${id}`);
    expect(res.statusCode, res.body).toBe(204);
    expect(res.body).toBe('');
    expectError(await listTemplates(PRIVATE_KEY), 401, 'invalid_private_key');
    expect((await t.store.keys.get('acme', id))?.status).toBe('revoked');
    expectError(await admin(t, 'DELETE', '/organizations/acme/keys/key_nope'), 404, 'not_found');
    // Another organization's key is not reachable through this one.
    await seedOrg(t.store, { id: 'other', keys: [{ type: 'private', key: 'sk_other_private_0001' }] });
    const foreign = (await t.store.keys.findByValue('sk_other_private_0001'))?.id ?? '';
    expectError(await admin(t, 'DELETE', `/organizations/acme/keys/${foreign}`), 404, 'not_found');
    expect((await t.store.keys.get('other', foreign))?.status).toBe('active');
  });

  const privateKeyId = async () => (await t.store.keys.findByValue(PRIVATE_KEY))?.id ?? '';
  const rotateWithGrace = async (id: string, grace: number): Promise<KeyBody> => {
    const res = await admin(t, 'POST', `/organizations/acme/keys/${id}/rotate`, { grace_seconds: grace });
    expect(res.statusCode, res.body).toBe(201);
    return res.json<KeyBody>();
  };

  it.skipIf(skip)(
    'rotate with grace_seconds: both keys work until the grace ends, then the old one is refused even while cached',
    async () => {
      await seedOrg(t.store);
      const old = await privateKeyId();
      const rotated = await rotateWithGrace(old, 60);
      expect(rotated).toMatchObject({
        status: 'active',
        expires_at: null,
        previous_key: { id: old, expires_at: '2026-01-01T00:01:00.000Z' },
      });

      const items = (await admin(t, 'GET', '/organizations/acme/keys')).json<{ items: KeyBody[] }>().items;
      expect(items.find((k) => k.id === old)).toMatchObject({
        status: 'rotated',
        revoked_at: '2026-01-01T00:00:00.000Z',
        expires_at: '2026-01-01T00:01:00.000Z',
      });
      expect(items.find((k) => k.id === rotated.id)?.expires_at).toBeNull();

      expect((await listTemplates(PRIVATE_KEY)).statusCode).toBe(200);
      expect((await listTemplates(rotated.key ?? '')).statusCode).toBe(200);
      t.clock.advance(59_999);
      expect((await listTemplates(PRIVATE_KEY)).statusCode).toBe(200);
      // The key record was just read through the catalog cache; its expiry is still decided now.
      t.clock.advance(1);
      expectError(await listTemplates(PRIVATE_KEY), 401, 'invalid_private_key');
      expect((await listTemplates(rotated.key ?? '')).statusCode).toBe(200);
      // The old key is not active: it cannot be rotated again, even during its grace.
      expectError(await admin(t, 'POST', `/organizations/acme/keys/${old}/rotate`), 409, 'conflict');
    },
  );

  it.skipIf(skip)('a public key rotated with grace still sends until the grace ends', async () => {
    await seedOrg(t.store);
    const old = (await t.store.keys.findByValue(PUBLIC_KEY))?.id ?? '';
    const rotated = await rotateWithGrace(old, 5);
    const send = (key: string) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/send',
        payload: { template_id: 'contact', template_params: { name: 'Ann', email: 'ann@example.com', message: 'hi' } },
        headers: { 'x-mail-public-key': key },
      });
    expect((await send(PUBLIC_KEY)).statusCode).toBe(202);
    expect((await send(rotated.key ?? '')).statusCode).toBe(202);
    t.clock.advance(5000);
    expectError(await send(PUBLIC_KEY), 401, 'invalid_public_key');
    expect((await send(rotated.key ?? '')).statusCode).toBe(202);
  });

  it.skipIf(skip)('grace_seconds 0 and a bare POST both cut the old key off at once', async () => {
    await seedOrg(t.store);
    const rotated = await rotateWithGrace(await privateKeyId(), 0);
    expect(rotated.previous_key?.expires_at).toBe('2026-01-01T00:00:00.000Z');
    expectError(await listTemplates(PRIVATE_KEY), 401, 'invalid_private_key');
    const bare = await admin(t, 'POST', `/organizations/acme/keys/${rotated.id}/rotate`);
    expect(bare.statusCode, bare.body).toBe(201);
    expectError(await listTemplates(rotated.key ?? ''), 401, 'invalid_private_key');
  });

  it.skipIf(skip)('DELETE of a rotated key ends its grace at once; after the grace it changes nothing', async () => {
    await seedOrg(t.store);
    const old = await privateKeyId();
    await rotateWithGrace(old, 3600);
    expect((await listTemplates(PRIVATE_KEY)).statusCode).toBe(200);
    t.clock.advance(1000);
    expect((await admin(t, 'DELETE', `/organizations/acme/keys/${old}`)).statusCode).toBe(204);
    expectError(await listTemplates(PRIVATE_KEY), 401, 'invalid_private_key');
    expect(await t.store.keys.get('acme', old)).toMatchObject({ status: 'revoked', expires_at: Date.UTC(2026, 0, 1, 0, 0, 1) });

    // A key whose grace already ended keeps its record: it stopped at the end of the grace.
    const second = (await t.store.keys.list('acme')).find((k) => k.type === 'private' && k.status === 'active')?.id ?? '';
    await rotateWithGrace(second, 10);
    t.clock.advance(20_000);
    expect((await admin(t, 'DELETE', `/organizations/acme/keys/${second}`)).statusCode).toBe(204);
    expect(await t.store.keys.get('acme', second)).toMatchObject({
      status: 'rotated',
      expires_at: Date.UTC(2026, 0, 1, 0, 0, 11),
    });
  });

  it.skipIf(skip)('a bad grace_seconds is a 400 naming the field, and nothing is rotated', async () => {
    await seedOrg(t.store);
    const old = await privateKeyId();
    for (const grace of [-1, 1.5, '60', 30 * 24 * 3600 + 1, null]) {
      const err = expectError(
        await admin(t, 'POST', `/organizations/acme/keys/${old}/rotate`, { grace_seconds: grace }),
        400,
        'invalid_body',
      );
      expect(err.details?.fields?.[0]?.field, JSON.stringify(grace)).toBe('grace_seconds');
    }
    expectError(await admin(t, 'POST', `/organizations/acme/keys/${old}/rotate`, { grace: 60 }), 400, 'invalid_body');
    expect((await t.store.keys.get('acme', old))?.status).toBe('active');
    expect((await listTemplates(PRIVATE_KEY)).statusCode).toBe(200);
  });

  it.skipIf(skip)('the grace period is stored: another process over the same database honours it', async () => {
    await seedOrg(t.store);
    await rotateWithGrace(await privateKeyId(), 30);
    const store = await openStore(t.database.url, { clock: t.clock });
    const app = await buildTestApp(testConfig(), { store, clock: t.clock });
    try {
      const call = () => app.inject({ method: 'GET', url: '/v1/templates', headers: { authorization: `Bearer ${PRIVATE_KEY}` } });
      expect((await call()).statusCode).toBe(200);
      t.clock.advance(30_000);
      expectError(await call(), 401, 'invalid_private_key');
    } finally {
      await app.close();
      await store.close();
    }
  });
});
