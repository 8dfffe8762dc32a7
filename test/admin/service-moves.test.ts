import { expect, it } from 'vitest';
import { buildTestApp, freshAppEach, type TestApp } from '../support/app.js';
import { admin, createOrg } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { eventMessageIds, insertMessage } from '../support/db.js';
import { describeDialects } from '../support/dialects.js';
import { openTestStore } from '../support/stores.js';

/**
 * Issue 29: deleting a service stranded its mail. A delete is refused (409) while messages are
 * bound to the service; POST …/move-messages moves them to another service first.
 */
const OUTBOX = { provider: 'outbox', default: false };

describeDialects('moving messages off a service, and its delete, on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  const seed = async () => {
    await createOrg(t);
    for (const id of ['old', 'new'])
      expect((await admin(t, 'PUT', `/organizations/acme/services/${id}`, OUTBOX)).statusCode).toBe(201);
    await insertMessage(t.store, 'acme', 'msg_queued', 'queued', 1, true, 'old');
    await insertMessage(t.store, 'acme', 'msg_held', 'held', 2, false, 'old');
    await insertMessage(t.store, 'acme', 'msg_broken', 'held_service_error', 3, true, 'old');
    await insertMessage(t.store, 'acme', 'msg_sent', 'sent', 4, true, 'old');
    await insertMessage(t.store, 'acme', 'msg_other', 'queued', 5, true, 'new');
  };
  const serviceOf = async (id: string) => (await t.store.messages.get('acme', id))?.service_id;
  const statusOf = async (id: string) => (await t.store.messages.get('acme', id))?.status;

  it.skipIf(skip)('DELETE is a 409 naming the queued and held messages, and deletes nothing', async () => {
    await seed();
    const waiting = await admin(t, 'GET', '/organizations/acme/services/old/messages-waiting');
    expect(waiting.json()).toEqual({ queued: 1, sending: 0, held: 2 });
    const refused = expectError(await admin(t, 'DELETE', '/organizations/acme/services/old'), 409, 'conflict');
    expect(refused.details).toEqual({ reason: 'messages_waiting', queued: 1, sending: 0, held: 2 });
    expect(refused.message).toContain('move-messages');
    expect(await t.store.services.get('acme', 'old')).toBeDefined();
  });

  it.skipIf(skip)(
    'move-messages moves queued and held ones; held_service_error is queued again; then DELETE is 204',
    async () => {
      await seed();
      const res = await admin(t, 'POST', '/organizations/acme/services/old/move-messages', { to: 'new' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ moved: 3 });
      expect(await serviceOf('msg_queued')).toBe('new');
      expect(await statusOf('msg_queued')).toBe('queued');
      expect(await serviceOf('msg_held')).toBe('new');
      expect(await statusOf('msg_held')).toBe('held');
      expect(await serviceOf('msg_broken')).toBe('new');
      expect(await statusOf('msg_broken')).toBe('queued');
      expect((await t.store.messages.get('acme', 'msg_broken'))?.next_attempt_at).toBe(t.clock.now());
      // A sent message keeps the service it went through: its history does not change.
      expect(await serviceOf('msg_sent')).toBe('old');
      expect((await eventMessageIds(t.store, 'queued', 'service_moved')).sort()).toEqual([
        'msg_broken',
        'msg_held',
        'msg_queued',
      ]);

      expect((await admin(t, 'GET', '/organizations/acme/services/old/messages-waiting')).json()).toEqual({
        queued: 0,
        sending: 0,
        held: 0,
      });
      expect((await admin(t, 'DELETE', '/organizations/acme/services/old')).statusCode).toBe(204);
      expect(await t.store.services.get('acme', 'old')).toBeUndefined();
    },
  );

  it.skipIf(skip)('a sending message blocks the delete and is never moved', async () => {
    await seed();
    await insertMessage(t.store, 'acme', 'msg_sending', 'sending', 6, true, 'old');
    expect((await admin(t, 'POST', '/organizations/acme/services/old/move-messages', { to: 'new' })).json()).toEqual({
      moved: 3,
    });
    expect(await serviceOf('msg_sending')).toBe('old');
    const refused = expectError(await admin(t, 'DELETE', '/organizations/acme/services/old'), 409, 'conflict');
    expect(refused.details).toMatchObject({ queued: 0, sending: 1, held: 0 });
  });

  it.skipIf(skip)('messages left behind by an earlier delete can be moved; the target must exist and differ', async () => {
    await createOrg(t);
    await admin(t, 'PUT', '/organizations/acme/services/new', OUTBOX);
    await insertMessage(t.store, 'acme', 'msg_stranded', 'held_service_error', 1, true, 'gone');
    expectError(await admin(t, 'POST', '/organizations/acme/services/gone/move-messages', { to: 'nowhere' }), 404, 'not_found');
    const same = expectError(
      await admin(t, 'POST', '/organizations/acme/services/new/move-messages', { to: 'new' }),
      400,
      'invalid_body',
    );
    expect(same.details).toEqual({ fields: [{ field: 'to', message: 'is the service the messages are on' }] });
    expectError(await admin(t, 'POST', '/organizations/acme/services/gone/move-messages', {}), 400, 'invalid_body');
    const moved = await admin(t, 'POST', '/organizations/acme/services/gone/move-messages', { to: 'new' });
    expect(moved.json()).toEqual({ moved: 1 });
    expect(await statusOf('msg_stranded')).toBe('queued');
    expectError(await admin(t, 'POST', '/organizations/ghost/services/gone/move-messages', { to: 'new' }), 404, 'not_found');
  });

  it.skipIf(skip)('DELETE of a service with nothing waiting is 204; an unknown one 404', async () => {
    await createOrg(t);
    await admin(t, 'PUT', '/organizations/acme/services/old', OUTBOX);
    await insertMessage(t.store, 'acme', 'msg_sent', 'sent', 1, true, 'old');
    expect((await admin(t, 'DELETE', '/organizations/acme/services/old')).statusCode).toBe(204);
    expectError(await admin(t, 'DELETE', '/organizations/acme/services/old'), 404, 'not_found');
  });

  it.skipIf(skip)(
    'a move onto a service deleted at the same time (a second app, its own connections) never strands mail',
    async () => {
      await createOrg(t);
      await admin(t, 'PUT', '/organizations/acme/services/s0', OUTBOX);
      // Enough messages that a move takes a while: a delete has room to slip into its middle.
      for (let i = 0; i < 200; i++) await insertMessage(t.store, 'acme', `msg_${i}`, 'queued', i, true, 's0');
      const store = await openTestStore(t.database.url, t.clock);
      const other = await buildTestApp(t.config, { store, clock: t.clock });
      try {
        let holder = 's0';
        const outcomes = new Set<string>();
        for (let round = 1; round <= 8; round++) {
          const to = `s${round}`;
          expect((await admin(t, 'PUT', `/organizations/acme/services/${to}`, OUTBOX)).statusCode).toBe(201);
          const [move, del] = await Promise.all([
            admin(t, 'POST', `/organizations/acme/services/${holder}/move-messages`, { to }),
            admin({ ...t, app: other }, 'DELETE', `/organizations/acme/services/${to}`),
          ]);
          const outcome = `${move.statusCode}/${del.statusCode}`;
          outcomes.add(outcome);
          // Either the move went first (the delete then counts its messages: 409), or the delete did (404).
          expect(['200/409', '404/204'], `${outcome}: ${move.body} ${del.body}`).toContain(outcome);
          if (move.statusCode === 200) holder = to;
          const on = new Set((await Promise.all(Array.from({ length: 200 }, (_, i) => serviceOf(`msg_${i}`)))).map(String));
          expect([...on]).toEqual([holder]);
          expect(await t.store.services.get('acme', holder)).toBeDefined();
        }
        expect(outcomes.size).toBeGreaterThan(0);
      } finally {
        await other.close();
        await store.close();
      }
    },
    60_000,
  );
});
