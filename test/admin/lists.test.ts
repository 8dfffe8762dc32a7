import { expect, it } from 'vitest';
import { freshAppEach, type TestApp } from '../support/app.js';
import { admin, createOrg } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { describeDialects } from '../support/dialects.js';

describeDialects('admin suppressions and block list on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  it.skipIf(skip)('suppressions: add 201, add again 200 keeping the first entry, list, remove 204, then 404', async () => {
    await createOrg(t);
    const added = await admin(t, 'POST', '/organizations/acme/suppressions', {
      email: 'Bounced@Example.com',
      reason: 'hard_bounce',
    });
    expect(added.statusCode, added.body).toBe(201);
    expect(added.json()).toEqual({ email: 'bounced@example.com', reason: 'hard_bounce', created_at: '2026-01-01T00:00:00.000Z' });

    t.clock.advance(1000);
    const again = await admin(t, 'POST', '/organizations/acme/suppressions', { email: 'bounced@example.com' });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toEqual({ email: 'bounced@example.com', reason: 'hard_bounce', created_at: '2026-01-01T00:00:00.000Z' });
    const manual = await admin(t, 'POST', '/organizations/acme/suppressions', { email: 'a@example.com' });
    expect(manual.json()).toMatchObject({ email: 'a@example.com', reason: 'manual' });

    const list = await admin(t, 'GET', '/organizations/acme/suppressions');
    expect(list.statusCode).toBe(200);
    expect(list.json<{ items: Array<{ email: string }> }>().items.map((s) => s.email)).toEqual([
      'a@example.com',
      'bounced@example.com',
    ]);

    const removed = await admin(t, 'DELETE', `/organizations/acme/suppressions/${encodeURIComponent('BOUNCED@example.com')}`);
    expect(removed.statusCode, removed.body).toBe(204);
    expect(await t.store.suppressions.findAmong('acme', ['bounced@example.com'])).toEqual([]);
    expectError(await admin(t, 'DELETE', '/organizations/acme/suppressions/bounced@example.com'), 404, 'not_found');

    expectError(
      await admin(t, 'POST', '/organizations/acme/suppressions', { email: 'x@example.com', reason: 'dislike' }),
      400,
      'invalid_body',
    );
    expectError(await admin(t, 'POST', '/organizations/acme/suppressions', { email: 'no-at-sign' }), 400, 'invalid_body');
    expect(await t.store.suppressions.list('acme')).toHaveLength(1);
  });

  it.skipIf(skip)('block list: add 201, again 200, list with the watched variable, remove 204, then 404', async () => {
    await createOrg(t, 'acme', { security: { block_list: { watch_variable: 'email' } } });
    const added = await admin(t, 'POST', '/organizations/acme/block-list', { value: 'Spammer@Bad.test' });
    expect(added.statusCode, added.body).toBe(201);
    expect(added.json()).toEqual({ value: 'spammer@bad.test' });
    expect((await admin(t, 'POST', '/organizations/acme/block-list', { value: 'spammer@bad.test' })).statusCode).toBe(200);
    await admin(t, 'POST', '/organizations/acme/block-list', { value: 'bad.test' });

    const list = await admin(t, 'GET', '/organizations/acme/block-list');
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({ items: ['bad.test', 'spammer@bad.test'], watch_variable: 'email', next_cursor: null });

    const removed = await admin(t, 'DELETE', '/organizations/acme/block-list/spammer@bad.test');
    expect(removed.statusCode, removed.body).toBe(204);
    expect(await t.store.blockList.list('acme')).toEqual(['bad.test']);
    expectError(await admin(t, 'DELETE', '/organizations/acme/block-list/spammer@bad.test'), 404, 'not_found');
    expectError(await admin(t, 'POST', '/organizations/acme/block-list', { value: '' }), 400, 'invalid_body');
    expectError(await admin(t, 'POST', '/organizations/acme/block-list', { value: '   ' }), 400, 'invalid_body');
  });

  it.skipIf(skip)("one organization's lists are not another's", async () => {
    await createOrg(t, 'acme');
    await createOrg(t, 'beta');
    await admin(t, 'POST', '/organizations/acme/suppressions', { email: 'x@example.com' });
    await admin(t, 'POST', '/organizations/acme/block-list', { value: 'y@example.com' });
    expect((await admin(t, 'GET', '/organizations/beta/suppressions')).json()).toEqual({ items: [], next_cursor: null });
    expect((await admin(t, 'GET', '/organizations/beta/block-list')).json()).toEqual({
      items: [],
      watch_variable: null,
      next_cursor: null,
    });
    expectError(await admin(t, 'DELETE', '/organizations/beta/suppressions/x@example.com'), 404, 'not_found');
    expectError(await admin(t, 'DELETE', '/organizations/beta/block-list/y@example.com'), 404, 'not_found');
  });
});
