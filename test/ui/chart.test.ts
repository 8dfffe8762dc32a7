import { describe, expect, it } from 'vitest';
import {
  barSlot,
  chartSummary,
  labelledDays,
  linearScale,
  niceTicks,
  shortDate,
  stackDays,
  totals,
  type DayCounts,
} from '../../ui/src/lib/chart.js';

const day = (date: string, c: Partial<Omit<DayCounts, 'date'>> = {}): DayCounts => ({
  date,
  accepted: 0,
  delivered: 0,
  bounced: 0,
  complained: 0,
  failed: 0,
  held: 0,
  ...c,
});

describe('stackDays', () => {
  it('stacks the statuses under the accepted total, the rest as "other"', () => {
    const [d] = stackDays([day('2026-11-19', { accepted: 10, delivered: 5, bounced: 1, held: 2 })]);
    expect(d?.total).toBe(10);
    expect(d?.segments).toEqual([
      { key: 'delivered', value: 5, from: 0, to: 5 },
      { key: 'other', value: 2, from: 5, to: 7 },
      { key: 'held', value: 2, from: 7, to: 9 },
      { key: 'bounced', value: 1, from: 9, to: 10 },
    ]);
  });

  it('leaves empty days without segments, and never draws less than the parts', () => {
    const [empty, over] = stackDays([day('a'), day('b', { accepted: 1, delivered: 2, failed: 1 })]);
    expect(empty).toEqual({ date: 'a', total: 0, segments: [] });
    expect(over?.total).toBe(3);
    expect(over?.segments.map((s) => s.key)).toEqual(['delivered', 'failed']);
  });

  it('treats negative, fractional and non-finite counts as whole non-negative numbers', () => {
    const [d] = stackDays([day('a', { accepted: 2.7, delivered: -3, held: Number.NaN })]);
    expect(d?.total).toBe(2);
    expect(d?.segments).toEqual([{ key: 'other', value: 2, from: 0, to: 2 }]);
  });
});

describe('niceTicks', () => {
  it('steps by 1, 2 or 5 times a power of ten and reaches the maximum', () => {
    expect(niceTicks(0)).toEqual([0, 1]);
    expect(niceTicks(4)).toEqual([0, 1, 2, 3, 4]);
    expect(niceTicks(7)).toEqual([0, 2, 4, 6, 8]);
    expect(niceTicks(100)).toEqual([0, 50, 100]);
    expect(niceTicks(101)).toEqual([0, 50, 100, 150]);
    expect(niceTicks(1234)).toEqual([0, 500, 1000, 1500]);
  });

  it('always ends at or above the maximum with whole steps', () => {
    for (const max of [1, 3, 9, 11, 38, 99, 250, 999, 12_345, 100_000]) {
      const ticks = niceTicks(max);
      expect(ticks[0]).toBe(0);
      expect(ticks[ticks.length - 1]).toBeGreaterThanOrEqual(max);
      expect(ticks.length).toBeLessThanOrEqual(7);
      for (const t of ticks) expect(Number.isInteger(t)).toBe(true);
    }
  });
});

describe('geometry', () => {
  it('maps a domain onto a range, upside down for SVG y', () => {
    const y = linearScale(0, 100, 200, 0);
    expect(y(0)).toBe(200);
    expect(y(50)).toBe(100);
    expect(y(100)).toBe(0);
    expect(linearScale(5, 5, 10, 20)(5)).toBe(10);
  });

  it('lays bars side by side with a gap', () => {
    expect(barSlot(0, 7, 350)).toEqual({ x: 5, width: 40 });
    expect(barSlot(6, 7, 350)).toEqual({ x: 305, width: 40 });
    expect(barSlot(0, 7, 700)).toEqual({ x: 6, width: 88 }); // the gap stops growing at 12
    expect(barSlot(0, 90, 90).width).toBeGreaterThanOrEqual(0.8);
  });

  it('labels every day of a week, about eight of 30 or 90, always the last', () => {
    expect([...labelledDays(7)].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const month = labelledDays(30);
    expect(month.has(29)).toBe(true);
    expect(month.size).toBeLessThanOrEqual(8);
    const quarter = labelledDays(90);
    expect(quarter.has(89)).toBe(true);
    expect(quarter.size).toBeLessThanOrEqual(8);
  });

  it('writes dates short', () => {
    expect(shortDate('2026-11-19')).toBe('Nov 19');
    expect(shortDate('2026-01-01')).toBe('Jan 1');
    expect(shortDate('nonsense')).toBe('nonsense');
  });
});

describe('summary', () => {
  it('adds up the range and names the busiest day', () => {
    const daily = [
      day('2026-11-19', { accepted: 3, delivered: 3 }),
      day('2026-11-20', { accepted: 5, delivered: 2, failed: 1, held: 1 }),
    ];
    expect(totals(daily)).toEqual({ accepted: 8, delivered: 5, bounced: 0, complained: 0, failed: 1, held: 1 });
    expect(chartSummary(daily)).toBe(
      'Messages per day over 2 days, 2026-11-19 to 2026-11-20: 8 accepted, of which 5 delivered, 1 held, ' +
        '0 bounced, 0 complained, 1 failed. Busiest day 2026-11-20 with 5.',
    );
  });

  it('says when nothing was sent', () => {
    expect(chartSummary([])).toBe('Messages per day: no data.');
    expect(chartSummary([day('2026-11-19')])).toBe('Messages per day over 1 day, 2026-11-19 to 2026-11-19: none accepted.');
  });
});
