import { expect, it } from 'vitest';
import { admin } from '../support/admin.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { describeDialects } from '../support/dialects.js';
import { expectError } from '../support/http.js';
import { PRIVATE_KEY, seedOrg } from '../support/seed.js';

/**
 * Issue 29, keys: a name, a scope (`full` | `send_only`, private keys only), `last_used_at`
 * (written at most once a minute per key) and `created_by`, through the admin API: create,
 * rename, rotate and list keep them; a public send_only key is refused, naming the field.
 */
interface KeyView {
  id: string;
  type: string;
  mode: string;
  status: string;
  name: string | null;
  scope: string;
  last_used_at: string | null;
  created_by: string | null;
  created_at: string;
  key?: string;
}

const MINUTE = 60_000;

describeDialects('key details in the admin API on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, async (app) => {
    t = app;
    await seedOrg(t.store);
  });

  const create = (body: Record<string, unknown>) => admin(t, 'POST', '/organizations/acme/keys', body);
  const list = async () => (await admin(t, 'GET', '/organizations/acme/keys')).json<{ items: KeyView[] }>().items;
  const view = async (id: string) => (await list()).find((k) => k.id === id);
  const templates = (key: string) =>
    t.app.inject({ method: 'GET', url: '/v1/templates', headers: { authorization: `Bearer ${key}` } });

  it.skipIf(skip)(
    'POST takes a trimmed name and a scope; every view shows name, scope, last_used_at and created_by',
    async () => {
      const res = await create({ type: 'private', name: '  Billing server ', scope: 'send_only' });
      expect(res.statusCode, res.body).toBe(201);
      const created = res.json<KeyView>();
      expect(created).toMatchObject({ name: 'Billing server', scope: 'send_only', last_used_at: null, created_by: 'admin' });
      const { key: _value, ...stored } = created;
      expect(await view(created.id)).toEqual({ ...stored, expires_at: null });

      // Left out: no name, full scope. Keys of the YAML file (seedOrg) say so.
      const plain = (await create({ type: 'public' })).json<KeyView>();
      expect(plain).toMatchObject({ name: null, scope: 'full', created_by: 'admin' });
      const seeded = (await list()).find((k) => k.type === 'private' && k.created_by === 'config');
      expect(seeded).toMatchObject({ scope: 'full', name: null });
    },
  );

  it.skipIf(skip)('refused: a public send_only key, a blank or too long name, an unknown scope (400 invalid_body)', async () => {
    const pub = expectError(await create({ type: 'public', scope: 'send_only' }), 400, 'invalid_body');
    expect(pub.details?.fields?.map((f) => f.field)).toEqual(['scope']);
    const blank = expectError(await create({ type: 'private', name: '   ' }), 400, 'invalid_body');
    expect(blank.details?.fields?.map((f) => f.field)).toEqual(['name']);
    const control = expectError(await create({ type: 'private', name: 'a\nb' }), 400, 'invalid_body');
    expect(control.details?.fields?.map((f) => f.field)).toEqual(['name']);
    expectError(await create({ type: 'private', name: 'x'.repeat(101) }), 400, 'invalid_body');
    expectError(await create({ type: 'private', scope: 'read_only' }), 400, 'invalid_body');
    expect(await create({ type: 'private', name: 'x'.repeat(100), scope: 'full' })).toHaveProperty('statusCode', 201);
  });

  it.skipIf(skip)('PATCH renames (null clears) and changes a private key scope; a public key cannot be send_only', async () => {
    const k = (await create({ type: 'private', name: 'old' })).json<KeyView>();
    const renamed = await admin(t, 'PATCH', `/organizations/acme/keys/${k.id}`, { name: ' new name ' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json<KeyView>()).toMatchObject({ id: k.id, name: 'new name', scope: 'full' });
    expect((await view(k.id))?.name).toBe('new name');
    const narrowed = await admin(t, 'PATCH', `/organizations/acme/keys/${k.id}`, { scope: 'send_only' });
    expect(narrowed.json<KeyView>()).toMatchObject({ name: 'new name', scope: 'send_only' });
    const cleared = await admin(t, 'PATCH', `/organizations/acme/keys/${k.id}`, { name: null });
    expect(cleared.json<KeyView>()).toMatchObject({ name: null, scope: 'send_only' });
    expect(await view(k.id)).toMatchObject({ name: null, scope: 'send_only' });

    const pub = (await create({ type: 'public' })).json<KeyView>();
    const refused = expectError(
      await admin(t, 'PATCH', `/organizations/acme/keys/${pub.id}`, { scope: 'send_only' }),
      400,
      'invalid_body',
    );
    expect(refused.details?.fields?.map((f) => f.field)).toEqual(['scope']);
    expectError(await admin(t, 'PATCH', `/organizations/acme/keys/${k.id}`, {}), 400, 'invalid_body');
    expectError(await admin(t, 'PATCH', `/organizations/acme/keys/${k.id}`, { name: '' }), 400, 'invalid_body');
    expectError(await admin(t, 'PATCH', '/organizations/acme/keys/key_ghost', { name: 'x' }), 404, 'not_found');
  });

  it.skipIf(skip)('rotation keeps name, scope and mode; the new key is made by admin and never used yet', async () => {
    const k = (await create({ type: 'private', mode: 'test', name: 'Worker', scope: 'send_only' })).json<KeyView>();
    const res = await admin(t, 'POST', `/organizations/acme/keys/${k.id}/rotate`, { grace_seconds: 60 });
    expect(res.statusCode, res.body).toBe(201);
    const next = res.json<KeyView>();
    expect(next).toMatchObject({ name: 'Worker', scope: 'send_only', mode: 'test', created_by: 'admin', last_used_at: null });
    expect(await view(next.id)).toMatchObject({ name: 'Worker', scope: 'send_only', mode: 'test' });
    expect(await view(k.id)).toMatchObject({ name: 'Worker', scope: 'send_only', status: 'rotated' });
  });

  it.skipIf(skip)('last_used_at: set on first use, not rewritten within a minute, rewritten after', async () => {
    const id = (await t.store.keys.findByValue(PRIVATE_KEY))?.id ?? '';
    expect((await view(id))?.last_used_at).toBeNull();
    const first = new Date(t.clock.now()).toISOString();
    expect((await templates(PRIVATE_KEY)).statusCode).toBe(200);
    await t.store.keyUse.idle();
    expect((await view(id))?.last_used_at).toBe(first);

    t.clock.advance(MINUTE - 1);
    expect((await templates(PRIVATE_KEY)).statusCode).toBe(200);
    await t.store.keyUse.idle();
    expect((await view(id))?.last_used_at).toBe(first);

    t.clock.advance(1);
    const later = new Date(t.clock.now()).toISOString();
    expect((await templates(PRIVATE_KEY)).statusCode).toBe(200);
    await t.store.keyUse.idle();
    expect((await view(id))?.last_used_at).toBe(later);
  });

  it.skipIf(skip)('another process within the minute writes nothing: the UPDATE is conditional', async () => {
    const id = (await t.store.keys.findByValue(PRIVATE_KEY))?.id ?? '';
    const now = t.clock.now();
    expect(await t.store.keys.markUsed(id, now)).toBe(true);
    // A second process (its own memo empty) a few seconds later: no row changes.
    expect(await t.store.keys.markUsed(id, now + 5_000)).toBe(false);
    expect(await t.store.keys.markUsed(id, now + MINUTE - 1)).toBe(false);
    expect(await t.store.keys.markUsed(id, now + MINUTE)).toBe(true);
    expect((await t.store.keys.get('acme', id))?.last_used_at).toBe(now + MINUTE);
  });

  it.skipIf(skip)('a key use is no catalog change: the cached key stays cached; a rename empties the cache', async () => {
    const read = async () => {
      const res = await t.store.catalog.keyByValue(PRIVATE_KEY);
      if (res === undefined) throw new Error('seeded key missing');
      return res;
    };
    const cached = await read();
    await t.store.keys.markUsed(cached.id, t.clock.now());
    // Past the cache's 1 ms window, so the next read checks the stamp (src/storage/read-cache.ts).
    await new Promise((resolve) => setTimeout(resolve, 5));
    // Same object from the cache: the stamp did not move (migration 0019's triggers).
    expect(await read()).toBe(cached);
    await t.store.keys.update('acme', cached.id, { name: 'renamed' });
    const fresh = await read();
    expect(fresh).not.toBe(cached);
    expect(fresh.name).toBe('renamed');
    expect(fresh.last_used_at).toBe(t.clock.now());
  });
});
