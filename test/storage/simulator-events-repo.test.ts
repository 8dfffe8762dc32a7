import { expect, it } from 'vitest';
import type { NewSimulatorEvent } from '../../src/storage/simulator-events.js';
import { databaseOf } from '../support/db.js';
import { describeDialects, freshStoreEach } from '../support/dialects.js';
import { seedOrg } from '../support/seed.js';
import { insertModeMessage } from '../support/test-mode.js';

/** The simulator's schedule (issue 27 §1/§3) on both dialects. */
describeDialects('simulator events repository on %s', (dialect, skip) => {
  const t = freshStoreEach(dialect, skip, (s) => seedOrg(s.store));

  const event = (messageId: string, type: NewSimulatorEvent['type'], dueAt: number): NewSimulatorEvent => ({
    message_id: messageId,
    org_id: 'acme',
    recipient: 'bounce@simulator.mailroom.test',
    type,
    bounce_type: type === 'bounced' ? 'hard' : null,
    status: type === 'bounced' ? '5.1.1' : null,
    reason: type === 'bounced' ? 'simulated hard bounce' : null,
    due_at: dueAt,
    event_key: `${messageId}:bounce@simulator.mailroom.test:${type}`,
  });

  it.skipIf(skip)('schedules once per event key; due lists what is due, oldest first, with the message status', async () => {
    const m = await insertModeMessage(t.store, undefined, { mode: 'test', createdAt: 1000 });
    await t.store.simulatorEvents.schedule([event(m, 'bounced', 2000), event(m, 'delivered', 1500)]);
    // A retried hand-off schedules the same events again: nothing new, the first due time kept.
    await t.store.simulatorEvents.schedule([event(m, 'bounced', 9000)]);
    await t.store.simulatorEvents.schedule([]);
    expect(await t.store.simulatorEvents.due(1499, 10)).toEqual([]);
    const due = await t.store.simulatorEvents.due(2000, 10);
    expect(due.map((d) => [d.type, d.due_at, d.message_status])).toEqual([
      ['delivered', 1500, 'queued'],
      ['bounced', 2000, 'queued'],
    ]);
    expect(due[1]).toMatchObject({ ...event(m, 'bounced', 2000), message_status: 'queued' });
    expect(typeof due[0]?.id).toBe('number');
    expect(await t.store.simulatorEvents.due(2000, 1)).toHaveLength(1);

    await t.store.simulatorEvents.remove([due[0]?.id ?? 0]);
    await t.store.simulatorEvents.remove([]);
    expect((await t.store.simulatorEvents.due(2000, 10)).map((d) => d.type)).toEqual(['bounced']);
  });

  it.skipIf(skip)('events go with their message when it is purged', async () => {
    const m = await insertModeMessage(t.store, undefined, { mode: 'test', createdAt: 1000 });
    await t.store.simulatorEvents.schedule([event(m, 'delivered', 1500)]);
    await databaseOf(t.store).updateTable('messages').set({ status: 'sent' }).execute();
    await t.store.transaction((tx) => tx.messages.purgeOlderThan(5000, 100, 'test'));
    expect(await t.store.simulatorEvents.due(9000, 10)).toEqual([]);
  });
});
