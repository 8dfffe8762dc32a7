import { describe, expect, it } from 'vitest';
import { freshAppEach, type TestApp } from '../support/app.js';
import { CONTACT_TEMPLATE, seedOrg } from '../support/seed.js';
import { bearer, expectAccepted, expectError } from '../support/http.js';
import { post, sendBody } from '../support/send.js';
import { creditsOf, expectUnchanged, messageCount, snapshot } from '../support/stored.js';
import { DYN } from '../support/orgs.js';
import { describeDialects } from '../support/dialects.js';

/**
 * The send path with a test key and with simulator addresses (issue 27 §2): every check runs as
 * for a live send, but no credit is taken, idempotency keys are scoped per mode, and the
 * simulator's acceptance rules (D2, D3, D4) hold.
 */

const TEST_SK = 'sk_test_0123456789abcdef0123456789';
const TEST_PK = 'pk_test_0123456789abcdef0123456789';
const SIM = 'simulator.mailroom.test';

describeDialects('sends with a test key and to simulator addresses on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, async (app) => {
    t = app;
  });

  /** acme with `credits`, the contact and dyn templates, its live keys and a test pair. */
  async function seed(credits: number, extra: Parameters<typeof seedOrg>[1] = {}) {
    await seedOrg(t.store, { credits, when_out_of_credits: 'reject', templates: [CONTACT_TEMPLATE, DYN], ...extra });
    await t.store.keys.insert('acme', 'private', t.clock.now(), TEST_SK, 'test');
    await t.store.keys.insert('acme', 'public', t.clock.now(), TEST_PK, 'test');
  }
  const dyn = (to: string, key: string, extra: Record<string, string> = {}, headers: Record<string, string> = {}) =>
    post(t, { template_id: 'dyn', template_params: { to, ...extra } }, { ...bearer(key), ...headers });

  it.skipIf(skip)('a test key is accepted with no credits in reject mode, takes none and stores mode test', async () => {
    await seed(0);
    const a = expectAccepted(await post(t, sendBody(), bearer(TEST_SK)), 'queued');
    const b = expectAccepted(await post(t, sendBody(), { 'x-mail-public-key': TEST_PK }), 'queued');
    for (const id of [a.message_id, b.message_id]) {
      const row = await t.store.messages.get('acme', id);
      expect(row).toMatchObject({ mode: 'test', simulated: false, credit_taken: false, status: 'queued' });
    }
    expect(await creditsOf(t)).toBe(0);
    // The seeded live key named sk_test_… stays live (mode is the row's, never the prefix): 402.
    expectError(await post(t, sendBody()), 402, 'insufficient_credits');
  });

  it.skipIf(skip)('a live key to simulator addresses takes no credit either, and is marked simulated', async () => {
    await seed(1);
    const a = expectAccepted(await dyn(`delivered@${SIM}`, 'sk_test_private_0001'));
    expect(await t.store.messages.get('acme', a.message_id)).toMatchObject({
      mode: 'live',
      simulated: true,
      credit_taken: false,
    });
    expect(await creditsOf(t)).toBe(1);
    const real = expectAccepted(await dyn('ann@example.com', 'sk_test_private_0001'));
    expect(await t.store.messages.get('acme', real.message_id)).toMatchObject({
      mode: 'live',
      simulated: false,
      credit_taken: true,
    });
    expect(await creditsOf(t)).toBe(0);
  });

  it.skipIf(skip)('the same Idempotency-Key live and test gives two messages, each replayed in its own mode', async () => {
    await seed(10);
    const headers = { 'idempotency-key': 'run-42' };
    const test = expectAccepted(await dyn('ann@example.com', TEST_SK, {}, headers));
    const live = expectAccepted(await dyn('ann@example.com', 'sk_test_private_0001', {}, headers));
    expect(live.message_id).not.toBe(test.message_id);
    expect(await messageCount(t)).toBe(2);
    expect((await dyn('ann@example.com', TEST_SK, {}, headers)).json()).toMatchObject({ message_id: test.message_id });
    expect((await dyn('ann@example.com', 'sk_test_private_0001', {}, headers)).json()).toMatchObject({
      message_id: live.message_id,
    });
    expect(await messageCount(t)).toBe(2);
    expect(await creditsOf(t)).toBe(9);
  });

  it.skipIf(skip)('rate limits count a test key as a live one (the free plan: same count before 429)', async () => {
    await seed(10, { plan: 'free' });
    const acceptedBefore429 = async (key: string): Promise<number> => {
      for (let n = 0; n < 50; n++) {
        const res = await post(t, sendBody(), bearer(key));
        if (res.statusCode === 429) return n;
        expect(res.statusCode, res.body).toBe(202);
      }
      return -1;
    };
    const live = await acceptedBefore429('sk_test_private_0001');
    t.clock.advance(24 * 3600_000);
    const test = await acceptedBefore429(TEST_SK);
    expect(live).toBeGreaterThan(0);
    expect(test).toBe(live);
  });

  describe('simulator acceptance rules', () => {
    it.skipIf(skip)('an unknown simulator local part is 422 unknown_simulator_address, nothing stored', async () => {
      await seed(10);
      const before = await snapshot(t, 'acme');
      for (const key of [TEST_SK, 'sk_test_private_0001']) {
        const err = expectError(await dyn(`deliverd@${SIM}`, key), 422, 'invalid_recipient');
        expect(err.details).toEqual({ reason: 'unknown_simulator_address', recipients: [`deliverd@${SIM}`] });
      }
      await expectUnchanged(t, 'acme', before);
    });

    it.skipIf(skip)('a live key mixing simulator and real recipients is 422 simulator_mixed; a test key may', async () => {
      await seed(10);
      const before = await snapshot(t, 'acme');
      const err = expectError(
        await dyn(`bounce@${SIM}`, 'sk_test_private_0001', { cc: 'ann@example.com' }),
        422,
        'invalid_recipient',
      );
      expect(err.details).toEqual({ reason: 'simulator_mixed' });
      await expectUnchanged(t, 'acme', before);
      const ok = expectAccepted(await dyn(`bounce@${SIM}`, TEST_SK, { cc: 'ann@example.com' }));
      expect(await t.store.messages.get('acme', ok.message_id)).toMatchObject({ mode: 'test', simulated: true });
    });

    it.skipIf(skip)('suppressed@ (any label, any key) is 451 with simulated: true, before any message', async () => {
      await seed(10);
      const before = await snapshot(t, 'acme');
      for (const key of [TEST_SK, 'sk_test_private_0001']) {
        const err = expectError(await dyn(`Suppressed+ci7@${SIM}`, key), 451, 'recipient_suppressed');
        expect(err.details).toEqual({ recipients: [`suppressed+ci7@${SIM}`], simulated: true });
      }
      await expectUnchanged(t, 'acme', before);
    });

    it.skipIf(skip)('other simulator addresses skip the suppression list (D4); real suppressed ones do not', async () => {
      await seed(10, {
        suppressions: [
          { email: `bounce@${SIM}`, reason: 'hard_bounce' },
          { email: 'gone@example.com', reason: 'hard_bounce' },
        ],
      });
      expectAccepted(await dyn(`bounce@${SIM}`, 'sk_test_private_0001'));
      expectAccepted(await dyn(`bounce@${SIM}`, TEST_SK));
      const err = expectError(await dyn('gone@example.com', TEST_SK), 451, 'recipient_suppressed');
      expect(err.details).toEqual({ recipients: ['gone@example.com'] });
    });

    it.skipIf(skip)('the block list still applies to a test key (403 before 451)', async () => {
      await seed(10, { security: { allowed_origins: ['example.com'], block_list: { list: ['@evil.test'] } } });
      expectError(await dyn('x@evil.test', TEST_SK), 403, 'recipient_blocked');
    });
  });
});
