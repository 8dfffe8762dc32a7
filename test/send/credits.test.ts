import type { KyselyPlugin } from 'kysely';
import { expect, it } from 'vitest';
import { takeCredit } from '../../src/credits/take.js';
import { releaseMessage } from '../../src/credits/holds.js';
import { addCredits } from '../../src/credits/top-up.js';
import { ApiError } from '../../src/errors/api-error.js';
import { storeOver } from '../../src/storage/store.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { databaseOf, messageIds, setMessageFields } from '../support/db.js';
import { bearer, expectAccepted, expectError } from '../support/http.js';
import { creditsOf, eventTypes, messageCount } from '../support/stored.js';
import { post, sendBody } from '../support/send.js';
import { describeDialects } from '../support/dialects.js';

const publicKey = { 'x-mail-public-key': PUBLIC_KEY };

describeDialects('credits, hold mode and suppression on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  const statusOf = async (id: string) => (await t.store.messages.get('acme', id))?.status;

  /** Sends `n` messages one after the other, each a millisecond later than the one before. */
  const sendSequence = async (n: number, status: 'queued' | 'held'): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      t.clock.advance(1);
      ids.push(expectAccepted(await post(t, sendBody()), status).message_id);
    }
    return ids;
  };

  it.skipIf(skip)('hold mode with no credits: 202 held, no credit taken, a held event', async () => {
    await seedOrg(t.store, { credits: 0 });
    const body = expectAccepted(await post(t, sendBody()), 'held');
    const row = await t.store.messages.get('acme', body.message_id);
    expect(row?.status).toBe('held');
    expect(row?.credit_taken).toBe(false);
    expect(await eventTypes(t, body.message_id)).toEqual(['held']);
    expect(await creditsOf(t)).toBe(0);
    // A public-key send is held the same way.
    expectAccepted(await post(t, sendBody(), publicKey), 'held');
    expect(await creditsOf(t)).toBe(0);
    expect(await messageCount(t)).toBe(2);
  });

  it.skipIf(skip)('hold is the default mode', async () => {
    await seedOrg(t.store, { credits: 0 });
    expect((await t.store.organizations.get('acme'))?.when_out_of_credits).toBe('hold');
    expectAccepted(await post(t, sendBody()), 'held');
  });

  it.skipIf(skip)('reject mode with no credits: 402 insufficient_credits and no message', async () => {
    await seedOrg(t.store, { credits: 0, when_out_of_credits: 'reject' });
    expectError(await post(t, sendBody()), 402, 'insufficient_credits');
    expectError(await post(t, sendBody(), publicKey), 402, 'insufficient_credits');
    expect(await messageCount(t)).toBe(0);
    expect(await creditsOf(t)).toBe(0);
  });

  it.skipIf(skip)('reject mode: the last credit is used, the next send is refused', async () => {
    await seedOrg(t.store, { credits: 1, when_out_of_credits: 'reject' });
    expectAccepted(await post(t, sendBody()), 'queued');
    expectError(await post(t, sendBody()), 402, 'insufficient_credits');
    expect(await messageCount(t)).toBe(1);
    expect(await creditsOf(t)).toBe(0);
  });

  it.skipIf(skip)('a full hold queue is 402 with reason hold_queue_full, held and limit', async () => {
    await seedOrg(t.store, { credits: 0, hold_queue_limit: 1 });
    expectAccepted(await post(t, sendBody()), 'held');
    const err = expectError(await post(t, sendBody()), 402, 'insufficient_credits');
    expect(err.details).toMatchObject({ reason: 'hold_queue_full', held: 1, limit: 1 });
    expect(await messageCount(t)).toBe(1);
  });

  it.skipIf(skip)('a hold queue limit of 0 holds nothing', async () => {
    await seedOrg(t.store, { credits: 0, hold_queue_limit: 0 });
    const err = expectError(await post(t, sendBody()), 402, 'insufficient_credits');
    expect(err.details).toMatchObject({ reason: 'hold_queue_full', held: 0, limit: 0 });
    expect(await messageCount(t)).toBe(0);
  });

  it.skipIf(skip)('overdraft: a private key may go down to minus the overdraft, not below', async () => {
    await seedOrg(t.store, { credits: 1, overdraft: 2, when_out_of_credits: 'reject' });
    for (const expected of [0, -1, -2]) {
      expectAccepted(await post(t, sendBody()), 'queued');
      expect(await creditsOf(t)).toBe(expected);
    }
    expectError(await post(t, sendBody()), 402, 'insufficient_credits');
    expect(await creditsOf(t)).toBe(-2);
    expect(await messageCount(t)).toBe(3);
  });

  it.skipIf(skip)('overdraft in hold mode: private key sends are queued into the overdraft, then held', async () => {
    await seedOrg(t.store, { credits: 0, overdraft: 1 });
    expectAccepted(await post(t, sendBody()), 'queued');
    expect(await creditsOf(t)).toBe(-1);
    expectAccepted(await post(t, sendBody()), 'held');
    expect(await creditsOf(t)).toBe(-1);
  });

  it.skipIf(skip)('overdraft: a public key may not use it by default', async () => {
    await seedOrg(t.store, { credits: 0, overdraft: 5, when_out_of_credits: 'reject' });
    expectError(await post(t, sendBody(), publicKey), 402, 'insufficient_credits');
    expect(await creditsOf(t)).toBe(0);
    expect(await messageCount(t)).toBe(0);
    // The same organization's private key may.
    expectAccepted(await post(t, sendBody()), 'queued');
    expect(await creditsOf(t)).toBe(-1);
  });

  it.skipIf(skip)('overdraft: a public key in hold mode is held, not overdrawn', async () => {
    await seedOrg(t.store, { credits: 0, overdraft: 5 });
    expectAccepted(await post(t, sendBody(), publicKey), 'held');
    expect(await creditsOf(t)).toBe(0);
  });

  it.skipIf(skip)('overdraft: a public key may use it when security.public_overdraft is on', async () => {
    await seedOrg(t.store, {
      credits: 0,
      overdraft: 2,
      when_out_of_credits: 'reject',
      security: { allowed_origins: ['example.com'], allow_mobile_apps: true, public_overdraft: true },
    });
    expectAccepted(await post(t, sendBody(), publicKey), 'queued');
    expectAccepted(await post(t, sendBody(), publicKey), 'queued');
    expect(await creditsOf(t)).toBe(-2);
    expectError(await post(t, sendBody(), publicKey), 402, 'insufficient_credits');
    expect(await messageCount(t)).toBe(2);
  });

  it.skipIf(skip)('adding credits releases held messages oldest first, one credit each, as far as credits allow', async () => {
    await seedOrg(t.store, { credits: 0 });
    const held = await sendSequence(6, 'held');

    const first = await addCredits(t.store, 'acme', 4);
    expect(first.released).toEqual(held.slice(0, 4));
    expect(first.credits).toBe(0);
    expect(await creditsOf(t)).toBe(0);
    for (const id of held.slice(0, 4)) {
      expect(await statusOf(id)).toBe('queued');
      expect((await t.store.messages.get('acme', id))?.credit_taken).toBe(true);
      expect(await eventTypes(t, id)).toEqual(['held', 'released']);
    }
    for (const id of held.slice(4)) {
      expect(await statusOf(id)).toBe('held');
      expect(await eventTypes(t, id)).toEqual(['held']);
    }

    const second = await addCredits(t.store, 'acme', 10);
    expect(second.released).toEqual(held.slice(4));
    expect(second.credits).toBe(8);
    expect(await creditsOf(t)).toBe(8);
    for (const id of held) expect(await statusOf(id)).toBe('queued');

    // With credits again, new sends are queued, and a further top-up releases nothing.
    expectAccepted(await post(t, sendBody()), 'queued');
    expect((await addCredits(t.store, 'acme', 1)).released).toEqual([]);
    expect(await creditsOf(t)).toBe(8);
  });

  it.skipIf(skip)('a top-up that only pays back an overdraft releases nothing', async () => {
    await seedOrg(t.store, { credits: 0, overdraft: 2 });
    await sendSequence(2, 'queued');
    const held = await sendSequence(1, 'held');
    expect(await creditsOf(t)).toBe(-2);
    const paidBack = await addCredits(t.store, 'acme', 2);
    expect(paidBack.released).toEqual([]);
    expect(await creditsOf(t)).toBe(0);
    expect(await statusOf(held[0] ?? '')).toBe('held');
    const more = await addCredits(t.store, 'acme', 1);
    expect(more.released).toEqual(held);
    expect(await creditsOf(t)).toBe(0);
  });

  it.skipIf(skip)('releasing a message that was already sent is 409 conflict', async () => {
    await seedOrg(t.store, { credits: 0 });
    const [id] = await sendSequence(1, 'held');
    if (id === undefined) throw new Error('no message');
    await setMessageFields(t.store, id, { status: 'sent' });
    await addCredits(t.store, 'acme', 3);
    expect(await creditsOf(t)).toBe(3);

    const err = await releaseMessage(t.store, 'acme', id).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('conflict');
    expect((err as ApiError).status).toBe(409);
    // Nothing changed: no credit taken, status kept, no event added.
    expect(await creditsOf(t)).toBe(3);
    expect(await statusOf(id)).toBe('sent');
    expect(await eventTypes(t, id)).toEqual(['held']);
  });

  it.skipIf(skip)('releasing a held message takes a credit and queues it', async () => {
    await seedOrg(t.store, { credits: 0 });
    const [id] = await sendSequence(1, 'held');
    if (id === undefined) throw new Error('no message');
    await t.store.organizations.update('acme', { credits: 1 }, t.clock.now());
    expect(await releaseMessage(t.store, 'acme', id)).toBe('queued');
    expect(await statusOf(id)).toBe('queued');
    expect(await creditsOf(t)).toBe(0);
    expect(await eventTypes(t, id)).toEqual(['held', 'released']);
  });

  it.skipIf(skip)('a suppressed recipient is 451 recipient_suppressed: no credit, no message', async () => {
    await seedOrg(t.store, { suppressions: [{ email: 'owner@acme.test', reason: 'hard_bounce' }] });
    const err = expectError(await post(t, sendBody()), 451, 'recipient_suppressed');
    expect(JSON.stringify(err.details ?? {})).toContain('owner@acme.test');
    expectError(await post(t, sendBody(), publicKey), 451, 'recipient_suppressed');
    expect(await creditsOf(t)).toBe(100);
    expect(await messageCount(t)).toBe(0);
  });

  it.skipIf(skip)('suppression matches the address whatever its case, and also in hold mode with no credits', async () => {
    await seedOrg(t.store, { credits: 0, suppressions: [{ email: 'Owner@Acme.Test' }] });
    expectError(await post(t, sendBody()), 451, 'recipient_suppressed');
    expect(await messageCount(t)).toBe(0);
    expect(await creditsOf(t)).toBe(0);
  });

  it.skipIf(skip)('concurrent sends never queue more messages than credits (30 parallel, 10 credits, reject mode)', async () => {
    // Business plan: 30 requests in one instant stay under its 50 per second (Pro allows 20).
    await seedOrg(t.store, { plan: 'business_50k', credits: 10, when_out_of_credits: 'reject' });
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        post(
          t,
          sendBody({
            template_params: { name: `Sender ${i}`, email: `s${i}@example.org`, message: `m${i}` },
          }),
        ),
      ),
    );
    const accepted = responses.filter((r) => r.statusCode === 202);
    const refused = responses.filter((r) => r.statusCode === 402);
    expect(responses.map((r) => r.statusCode).filter((s) => s !== 202 && s !== 402)).toEqual([]);
    expect(accepted).toHaveLength(10);
    expect(refused).toHaveLength(20);
    for (const r of refused) expect(r.json<{ error: { code: string } }>().error.code).toBe('insufficient_credits');
    expect(await creditsOf(t)).toBe(0);
    expect(await messageCount(t)).toBe(10);
    const ids = new Set(accepted.map((r) => r.json<{ message_id: string }>().message_id));
    expect(ids.size).toBe(10);
    expect(new Set(await messageIds(t.store, 'acme'))).toEqual(ids);
  });

  it.skipIf(skip)('concurrent sends never hold more messages than the hold queue allows', async () => {
    await seedOrg(t.store, { credits: 3, hold_queue_limit: 5 });
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(t, sendBody(), bearer(PRIVATE_KEY))));
    const statuses = responses.map((r) => (r.statusCode === 202 ? r.json<{ status: string }>().status : String(r.statusCode)));
    expect(statuses.filter((s) => s === 'queued')).toHaveLength(3);
    expect(statuses.filter((s) => s === 'held')).toHaveLength(5);
    expect(statuses.filter((s) => s === '402')).toHaveLength(12);
    expect(await creditsOf(t)).toBe(0);
    expect(await t.store.messages.countHeld('acme')).toBe(5);
    expect(await messageCount(t)).toBe(8);
  });

  it.skipIf(skip || dialect !== 'postgres')(
    'a top-up committed between a failed take and the row lock is seen: the send is queued, not held with credits left',
    async () => {
      // The interleaving, made certain: right after the take finds no credit, a top-up commits
      // on another connection (it releases the holds it can see, not this uncommitted one).
      await seedOrg(t.store, { credits: 0, hold_queue_limit: 1000 });
      let toppedUp = false;
      const topUpAfterFailedTake: KyselyPlugin = {
        transformQuery: (args) => args.node,
        transformResult: async (args) => {
          if (!toppedUp && args.result.numAffectedRows === 0n) {
            toppedUp = true;
            await addCredits(t.store, 'acme', 5);
          }
          return args.result;
        },
      };
      const org = await t.store.organizations.get('acme');
      if (org === undefined) throw new Error('seeded organization missing');
      // A second store over the same pool, its every query passing through the plugin (never
      // closed: it would end the shared pool).
      const watched = storeOver(databaseOf(t.store).withPlugin(topUpAfterFailedTake), dialect, t.clock);
      const outcome = await watched.transaction((tx) => takeCredit(tx, org, 'private'));
      expect(toppedUp).toBe(true);
      expect(outcome).toEqual({ status: 'queued', creditTaken: true });
      expect(await creditsOf(t)).toBe(4);
    },
  );
});
