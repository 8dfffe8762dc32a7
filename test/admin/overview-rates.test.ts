import { expect, it } from 'vitest';
import type { MessageStatus } from '../../src/domain/types.js';
import { newId } from '../../src/domain/ids.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { admin } from '../support/admin.js';
import { insertMessage, setMessageFields } from '../support/db.js';
import { describeDialects } from '../support/dialects.js';
import { seedOrg } from '../support/seed.js';

/**
 * The overview's rates (issue 29): delivery = delivered / sent, bounce = bounced / sent,
 * complaint = complained / delivered (src/domain/rates.ts), per UTC day and over the range, of
 * one mode; null when the denominator is 0. Each day's figures match the messages list filtered
 * to that day and status, which is where the UI's links go.
 */

interface Figures {
  sent: number;
  delivered: number;
  bounced: number;
  complained: number;
  delivery_rate: number | null;
  bounce_rate: number | null;
  complaint_rate: number | null;
}
interface Overview {
  daily: Array<{ date: string }>;
  rates: { range: Figures; daily: Array<{ date: string } & Figures> };
}

const DAY = 86_400_000;

describeDialects('the overview rates on %s', (dialect, skip) => {
  let t: TestApp;
  freshAppEach(dialect, skip, async (app) => {
    t = app;
    await seedOrg(t.store, { credits: 1000 });
  });

  const add = async (status: MessageStatus, createdAt: number, n = 1, mode: 'live' | 'test' = 'live') => {
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
  const listed = async (query: string): Promise<number> => {
    const res = await admin(t, 'GET', `/organizations/acme/messages?limit=100&${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ items: unknown[] }>().items.length;
  };

  it.skipIf(skip)('gives rates per day and over the range, with their denominators, live and test apart', async () => {
    const now = t.clock.now();
    // Today: 6 delivered, 1 complained, 2 bounced, 1 sent (no report yet), 1 failed, 1 queued.
    await add('delivered', now, 6);
    await add('complained', now);
    await add('bounced', now, 2);
    await add('sent', now);
    await add('failed', now);
    await add('queued', now);
    // Two days ago: only held and failed messages: nothing sent, every rate null.
    await add('held', now - 2 * DAY, 2);
    await add('failed', now - 2 * DAY);
    // Five days ago: 3 delivered.
    await add('delivered', now - 5 * DAY, 3);
    // Eight days ago: outside the 7 days.
    await add('bounced', now - 8 * DAY, 4);
    // Test messages never count in the live rates.
    await add('bounced', now, 5, 'test');
    await add('complained', now - 2 * DAY, 2, 'test');

    const live = await overview();
    expect(live.rates.daily.map((d) => d.date)).toEqual(live.daily.map((d) => d.date));
    const [five, , , two, , today] = live.rates.daily.slice(-6);
    expect(today).toEqual({
      date: live.daily[6]?.date,
      sent: 10,
      delivered: 7,
      bounced: 2,
      complained: 1,
      delivery_rate: 0.7,
      bounce_rate: 0.2,
      complaint_rate: 1 / 7,
    });
    // A day with messages but none sent: its rates are null, not NaN (which JSON would not carry).
    expect(two).toMatchObject({ sent: 0, delivered: 0, delivery_rate: null, bounce_rate: null, complaint_rate: null });
    expect(five).toMatchObject({ sent: 3, delivered: 3, delivery_rate: 1, bounce_rate: 0, complaint_rate: 0 });
    expect(live.rates.range).toEqual({
      sent: 13,
      delivered: 10,
      bounced: 2,
      complained: 1,
      delivery_rate: 10 / 13,
      bounce_rate: 2 / 13,
      complaint_rate: 0.1,
    });

    // Where the UI's links go: the day's messages by status (from/to as a plain UTC day).
    const date = today?.date ?? '';
    const day = `from=${date}&to=${date}`;
    expect(await listed(`${day}&status=bounced`)).toBe(2);
    expect(await listed(`${day}&status=delivered,complained`)).toBe(7);
    expect(await listed(`${day}&status=complained`)).toBe(1);
    expect(await listed(`${day}&status=sent,delivered,bounced,complained`)).toBe(10);

    // 30 days reach the bounces of eight days ago.
    const month = await overview('?days=30');
    expect(month.rates.daily).toHaveLength(30);
    expect(month.rates.range).toMatchObject({ sent: 17, bounced: 6, bounce_rate: 6 / 17 });

    const test = await overview('?mode=test');
    expect(test.rates.range).toEqual({
      sent: 7,
      delivered: 2,
      bounced: 5,
      complained: 2,
      delivery_rate: 2 / 7,
      bounce_rate: 5 / 7,
      complaint_rate: 1,
    });
    expect(test.rates.daily.at(-1)).toMatchObject({ sent: 5, bounced: 5, complaint_rate: null });
  });

  it.skipIf(skip)('has null rates throughout for an organization with no messages', async () => {
    const empty = await overview('?days=90');
    expect(empty.rates.daily).toHaveLength(90);
    expect(empty.rates.range).toEqual({
      sent: 0,
      delivered: 0,
      bounced: 0,
      complained: 0,
      delivery_rate: null,
      bounce_rate: null,
      complaint_rate: null,
    });
    expect(empty.rates.daily.every((d) => d.sent === 0 && d.bounce_rate === null)).toBe(true);
  });
});
