import { describe, expect, it } from 'vitest';
import { refundsCredit } from '../../src/credits/refund-policy.js';
import { MESSAGE_STATUSES } from '../../src/domain/types.js';
import { insertMessage, databaseOf } from '../support/db.js';
import { seedOrg } from '../support/seed.js';
import { describeDialects, freshStoreEach, type StoreOfTest } from '../support/dialects.js';

describe('refund policy', () => {
  it('gives the credit back only for a message that never left and had taken one', () => {
    expect(MESSAGE_STATUSES.filter((s) => refundsCredit(s, true))).toEqual(['discarded']);
    expect(MESSAGE_STATUSES.filter((s) => refundsCredit(s, false))).toEqual([]);
  });
});

describeDialects('storage credits and checked columns, on %s', (dialect, skip) => {
  const t = freshStoreEach(dialect, skip);
  const balance = async (s: StoreOfTest) => (await s.store.organizations.get('acme'))?.credits;

  it.skipIf(skip)('takes down to the floor, refunds, adds and releases held messages oldest first', async () => {
    await seedOrg(t.store, { credits: 1, overdraft: 1 });
    const s = t;
    const take = (mayOverdraw: boolean) => s.store.transaction((tx) => tx.credits.takeForSend('acme', mayOverdraw));
    expect(await take(false)).toBe(true);
    expect(await take(false)).toBe(false);
    expect(await take(true)).toBe(true);
    expect(await take(true)).toBe(false);
    expect(await balance(s)).toBe(-1);
    await s.store.transaction((tx) => tx.credits.refund('acme'));
    expect(await balance(s)).toBe(0);
    expect(await s.store.transaction((tx) => tx.credits.takeForRelease('acme', 5))).toBe(false);

    await insertMessage(s.store, 'acme', 'msg_b', 'held', 2000, false);
    await insertMessage(s.store, 'acme', 'msg_a', 'held', 1000, false);
    const released = await s.store.transaction(async (tx) => {
      const credits = await tx.credits.add('acme', 1, 3000);
      return tx.credits.releaseHeld('acme', credits ?? 0, 3000);
    });
    expect(released).toEqual(['msg_a']);
    expect(await balance(s)).toBe(0);
    expect(await s.store.transaction((tx) => tx.credits.add('nobody', 1, 3000))).toBeUndefined();
    expect(await s.store.transaction((tx) => tx.credits.position('acme'))).toEqual({
      credits: 0,
      credit_mode: 'metered',
      when_out_of_credits: 'hold',
      hold_queue_limit: expect.any(Number),
    });
  });

  it.skipIf(skip)('a TEXT column holding a value outside its union is reported, not passed on', async () => {
    await seedOrg(t.store);
    await databaseOf(t.store).updateTable('organizations').set({ plan: 'gold' }).where('id', '=', 'acme').execute();
    await expect(t.store.organizations.get('acme')).rejects.toThrow(
      'Corrupt row: organizations.plan holds "gold", not one of free, starter',
    );
    await insertMessage(t.store, 'acme', 'msg_x', 'queued', 1000, true);
    await databaseOf(t.store).updateTable('messages').set({ status: 'lost' }).where('id', '=', 'msg_x').execute();
    await expect(t.store.messages.get('acme', 'msg_x')).rejects.toThrow(/messages\.status holds "lost"/);
  });
});
