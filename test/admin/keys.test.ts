import { describe, expect, it } from 'vitest';
import { freshAppEach, type TestApp } from '../support/app.js';
import { PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { DIALECTS, postgresAvailable } from '../support/stores.js';
import { admin, expectError } from './helpers.js';

const pgUp = await postgresAvailable();

interface KeyBody {
  id: string;
  type: 'public' | 'private';
  hint: string;
  public_key: string | null;
  status: string;
  created_at: string;
  revoked_at: string | null;
  key?: string;
}

describe.each(DIALECTS)('admin keys on %s', (dialect) => {
  const skip = dialect === 'postgres' && !pgUp;
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => { t = app; });

  const listTemplates = (key: string) => t.app.inject({ method: 'GET', url: '/v1/templates', headers: { authorization: `Bearer ${key}` } });

  it.skipIf(skip)('POST creates a key whose value appears once; the list never shows a private value', async () => {
    await seedOrg(t.store);
    const res = await admin(t, 'POST', '/organizations/acme/keys', { type: 'private' });
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json<KeyBody>();
    expect(created.key).toMatch(/^sk_/);
    expect(created).toMatchObject({ type: 'private', status: 'active', public_key: null, revoked_at: null, created_at: '2026-01-01T00:00:00.000Z' });
    expect(created.hint).toBe(`sk_…${created.key?.slice(-4)}`);
    expect((await listTemplates(created.key ?? '')).statusCode).toBe(200);

    const list = await admin(t, 'GET', '/organizations/acme/keys');
    expect(list.statusCode).toBe(200);
    const items = list.json<{ items: KeyBody[] }>().items;
    expect(items).toHaveLength(3);
    expect(items.find((k) => k.id === created.id)).toEqual({ ...created, key: undefined });
    expect(list.body).not.toContain(created.key);
    expect(list.body).not.toContain(PRIVATE_KEY);
    expect(items.find((k) => k.type === 'public')?.public_key).toBe(PUBLIC_KEY);
  });

  it.skipIf(skip)('a given value is kept; a wrong prefix or a value in use is refused', async () => {
    await seedOrg(t.store);
    const given = await admin(t, 'POST', '/organizations/acme/keys', { type: 'public', key: 'pk_chosen_value_1' });
    expect(given.statusCode, given.body).toBe(201);
    expect(given.json<KeyBody>()).toMatchObject({ key: 'pk_chosen_value_1', public_key: 'pk_chosen_value_1' });
    const wrong = expectError(await admin(t, 'POST', '/organizations/acme/keys', { type: 'private', key: 'pk_chosen_value_2' }), 400, 'invalid_body');
    expect(wrong.details?.fields?.[0]?.field).toBe('key');
    expectError(await admin(t, 'POST', '/organizations/acme/keys', { type: 'public', key: 'pk_chosen_value_1' }), 409, 'conflict');
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
});
