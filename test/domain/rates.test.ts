import { describe, expect, it } from 'vitest';
import { countsByStatus, messageRates } from '../../src/domain/rates.js';

/** The rates' arithmetic (issue 29): each message counted once by its status; null, never NaN, over 0. */
describe('messageRates', () => {
  it('counts sent, delivered, bounced and complained messages as the definitions say', () => {
    const r = messageRates({ sent: 30, delivered: 950, bounced: 19, complained: 1, failed: 7, queued: 4, held: 2, discarded: 3 });
    // Failed, queued, held and discarded messages never reached a mailbox provider's decision.
    expect(r).toEqual({
      sent: 1000,
      delivered: 951,
      bounced: 19,
      complained: 1,
      delivery_rate: 0.951,
      bounce_rate: 0.019,
      complaint_rate: 1 / 951,
    });
  });

  it('gives null rates, not NaN, when a denominator is 0', () => {
    expect(messageRates({})).toEqual({
      sent: 0,
      delivered: 0,
      bounced: 0,
      complained: 0,
      delivery_rate: null,
      bounce_rate: null,
      complaint_rate: null,
    });
    // Only failed and held messages: nothing sent.
    expect(messageRates({ failed: 5, held: 2 }).bounce_rate).toBeNull();
    // Sent and bounced, none delivered: the complaint rate has no denominator, the others do.
    expect(messageRates({ sent: 3, bounced: 1 })).toMatchObject({ delivery_rate: 0, bounce_rate: 0.25, complaint_rate: null });
  });

  it('counts a complained message as delivered: complaints come after delivery', () => {
    expect(messageRates({ complained: 2 })).toMatchObject({
      sent: 2,
      delivered: 2,
      delivery_rate: 1,
      complaint_rate: 1,
      bounce_rate: 0,
    });
  });

  it('keeps every rate between 0 and 1', () => {
    for (const counts of [{ sent: 1 }, { delivered: 1 }, { bounced: 9, complained: 1 }, { complained: 5, delivered: 0 }]) {
      const r = messageRates(counts);
      for (const v of [r.delivery_rate, r.bounce_rate, r.complaint_rate]) if (v !== null) expect(v).toBeGreaterThanOrEqual(0);
      for (const v of [r.delivery_rate, r.bounce_rate, r.complaint_rate]) if (v !== null) expect(v).toBeLessThanOrEqual(1);
    }
  });
});

describe('countsByStatus', () => {
  it('sums rows of (status, count) by status, over days', () => {
    const rows = [
      { day: 1, status: 'delivered', count: 4 },
      { day: 2, status: 'delivered', count: 6 },
      { day: 2, status: 'bounced', count: 1 },
    ];
    expect(countsByStatus(rows)).toEqual({ delivered: 10, bounced: 1 });
    expect(messageRates(countsByStatus(rows))).toMatchObject({ sent: 11, bounce_rate: 1 / 11 });
    expect(countsByStatus([])).toEqual({});
  });
});
