import { expect, it } from 'vitest';
import { freshAppEach, type TestApp } from '../support/app.js';
import { seedOrg } from '../support/seed.js';
import { admin } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { insertMessage } from '../support/db.js';
import { describeDialects } from '../support/dialects.js';

const T0 = Date.UTC(2025, 11, 31);

describeDialects('admin credits and messages on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  const status = async (id: string) => (await t.store.messages.get('acme', id))?.status;
  const credits = async () => (await t.store.organizations.get('acme'))?.credits;

  it.skipIf(skip)('a top-up releases held messages oldest first, one credit each', async () => {
    await seedOrg(t.store, { credits: 0 });
    // Ids sort the other way round from their age, so only created_at can give this order.
    await insertMessage(t.store, 'acme', 'msg_c', 'held', T0 + 1, false);
    await insertMessage(t.store, 'acme', 'msg_b', 'held', T0 + 2, false);
    await insertMessage(t.store, 'acme', 'msg_a', 'held', T0 + 3, false);
    expect((await admin(t, 'GET', '/organizations/acme')).json<{ held: number }>().held).toBe(3);

    const res = await admin(t, 'POST', '/organizations/acme/credits', { amount: 2 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ credits: 0, released: ['msg_c', 'msg_b'] });
    expect([await status('msg_c'), await status('msg_b'), await status('msg_a')]).toEqual(['queued', 'queued', 'held']);
    expect((await t.store.messages.get('acme', 'msg_c'))?.credit_taken).toBe(true);
    expect((await t.store.messages.events('msg_c')).map((e) => e.type)).toEqual(['released']);
    expect(await credits()).toBe(0);

    const more = await admin(t, 'POST', '/organizations/acme/credits', { amount: 10 });
    expect(more.json()).toEqual({ credits: 9, released: ['msg_a'] });
    expect(await credits()).toBe(9);
    expect((await admin(t, 'GET', '/organizations/acme')).json<{ held: number; credits: number }>()).toMatchObject({
      held: 0,
      credits: 9,
    });
  });

  it.skipIf(skip)('amount must be a whole number of at least 1', async () => {
    await seedOrg(t.store);
    for (const body of [{ amount: 0 }, { amount: -5 }, { amount: 1.5 }, { amount: '5' }, {}, { amount: 1, extra: true }]) {
      expectError(await admin(t, 'POST', '/organizations/acme/credits', body), 400, 'invalid_body');
    }
    expect(await credits()).toBe(100);
  });

  it.skipIf(skip)('release takes a credit and queues a held message; without credits it is 402', async () => {
    await seedOrg(t.store, { credits: 1 });
    await insertMessage(t.store, 'acme', 'msg_1', 'held', T0 + 1, false);
    await insertMessage(t.store, 'acme', 'msg_2', 'held', T0 + 2, false);
    const res = await admin(t, 'POST', '/organizations/acme/messages/msg_2/release');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ message_id: 'msg_2', status: 'queued' });
    expect(await status('msg_2')).toBe('queued');
    expect(await credits()).toBe(0);

    expectError(await admin(t, 'POST', '/organizations/acme/messages/msg_1/release'), 402, 'insufficient_credits');
    expect(await status('msg_1')).toBe('held');
  });

  it.skipIf(skip)('releasing a message that was already sent is 409 conflict', async () => {
    await seedOrg(t.store);
    await insertMessage(t.store, 'acme', 'msg_sent', 'sent', T0, true);
    const err = expectError(await admin(t, 'POST', '/organizations/acme/messages/msg_sent/release'), 409, 'conflict');
    expect(err.message).toContain('already sent');
    expect(await status('msg_sent')).toBe('sent');
    expect(await credits()).toBe(100);
  });

  it.skipIf(skip)('cancelling a queued message discards it and refunds its credit', async () => {
    await seedOrg(t.store, { credits: 4 });
    await insertMessage(t.store, 'acme', 'msg_q', 'queued', T0, true);
    const res = await admin(t, 'POST', '/organizations/acme/messages/msg_q/cancel');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ message_id: 'msg_q', status: 'discarded' });
    expect(await status('msg_q')).toBe('discarded');
    expect(await credits()).toBe(5);
    // A second cancel finds nothing left to cancel and refunds nothing more.
    expectError(await admin(t, 'POST', '/organizations/acme/messages/msg_q/cancel'), 409, 'conflict');
    expect(await credits()).toBe(5);
  });

  it.skipIf(skip)('cancelling a held message refunds nothing; a sent one cannot be cancelled', async () => {
    await seedOrg(t.store, { credits: 0 });
    await insertMessage(t.store, 'acme', 'msg_h', 'held', T0, false);
    await insertMessage(t.store, 'acme', 'msg_s', 'sent', T0, true);
    expect((await admin(t, 'POST', '/organizations/acme/messages/msg_h/cancel')).json()).toEqual({
      message_id: 'msg_h',
      status: 'discarded',
    });
    expect(await credits()).toBe(0);
    expectError(await admin(t, 'POST', '/organizations/acme/messages/msg_s/cancel'), 409, 'conflict');
    expect(await status('msg_s')).toBe('sent');
  });

  it.skipIf(skip)('an unknown message, or one of another organization, is 404 message_not_found', async () => {
    await seedOrg(t.store);
    await seedOrg(t.store, { id: 'other', keys: [] });
    await insertMessage(t.store, 'other', 'msg_theirs', 'held', T0, false);
    expectError(await admin(t, 'POST', '/organizations/acme/messages/msg_none/release'), 404, 'message_not_found');
    expectError(await admin(t, 'POST', '/organizations/acme/messages/msg_none/cancel'), 404, 'message_not_found');
    expectError(await admin(t, 'POST', '/organizations/acme/messages/msg_theirs/release'), 404, 'message_not_found');
    expectError(await admin(t, 'POST', '/organizations/acme/messages/msg_theirs/cancel'), 404, 'message_not_found');
    expect((await t.store.messages.get('other', 'msg_theirs'))?.status).toBe('held');
  });
});
