import { expect, it } from 'vitest';
import type { MessageStatus } from '../../src/domain/types.js';
import { newId } from '../../src/domain/ids.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { admin } from '../support/admin.js';
import { insertMessage, setMessageFields } from '../support/db.js';
import { describeDialects } from '../support/dialects.js';
import { expectError } from '../support/http.js';
import { seedOrg } from '../support/seed.js';

/**
 * The overview per mode (issue 27 §4): its counts, queue and held messages are of live messages
 * by default and of test messages with `mode=test`, never mixed, so test traffic never inflates
 * the live page; credits and the services are the organization's, the same in both.
 */

interface Overview {
  mode: string;
  daily: Array<{ date: string; accepted: number; delivered: number; bounced: number; failed: number; held: number }>;
  queue: { depth: number };
  held_messages: number;
  credits: { balance: number | null };
  services: Array<{ id: string }>;
}

const DAY = 86_400_000;

describeDialects('the overview per mode on %s', (dialect, skip) => {
  let t: TestApp;
  freshAppEach(dialect, skip, async (app) => {
    t = app;
    await seedOrg(t.store, { credits: 42 });
  });

  const add = async (status: MessageStatus, mode: 'live' | 'test', createdAt: number, n = 1) => {
    for (let i = 0; i < n; i++) {
      const id = newId('msg');
      await insertMessage(t.store, 'acme', id, status, createdAt, mode === 'live');
      if (mode === 'test') await setMessageFields(t.store, id, { mode: 'test' });
    }
  };
  const overview = async (query = ''): Promise<Overview> => {
    const res = await admin(t, 'GET', `/organizations/acme/overview${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Overview>();
  };

  it.skipIf(skip)('counts live messages by default and test messages on request, never both', async () => {
    const now = t.clock.now();
    await add('delivered', 'live', now, 2);
    await add('bounced', 'live', now - DAY);
    await add('queued', 'live', now);
    await add('held', 'live', now);
    await add('delivered', 'test', now, 3);
    await add('failed', 'test', now);
    await add('bounced', 'test', now - DAY, 2);
    await add('queued', 'test', now, 2);

    const live = await overview();
    expect(live.mode).toBe('live');
    const [liveYesterday, liveToday] = live.daily.slice(-2);
    expect(liveToday).toMatchObject({ accepted: 4, delivered: 2, failed: 0, held: 1 });
    expect(liveYesterday).toMatchObject({ accepted: 1, bounced: 1 });
    expect(live.queue.depth).toBe(1);
    expect(live.held_messages).toBe(1);
    expect(await overview('?mode=live')).toEqual(live);

    const test = await overview('?mode=test&days=30');
    expect(test.mode).toBe('test');
    expect(test.daily).toHaveLength(30);
    const [testYesterday, testToday] = test.daily.slice(-2);
    expect(testToday).toMatchObject({ accepted: 6, delivered: 3, failed: 1, held: 0 });
    expect(testYesterday).toMatchObject({ accepted: 2, bounced: 2 });
    expect(test.queue.depth).toBe(2);
    expect(test.held_messages).toBe(0);
    // The organization's own, whatever the mode.
    expect(test.credits).toEqual(live.credits);
    expect(test.services).toEqual(live.services);

    expectError(await admin(t, 'GET', '/organizations/acme/overview?mode=both'), 400, 'invalid_body');
  });
});
