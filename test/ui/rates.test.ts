import { describe, expect, it } from 'vitest';
import { formatPercent, formatRate, formatRateCount, RATES, STATUSES_OF } from '../../ui/src/lib/rates.js';

describe("the overview's rates as written (issue 29)", () => {
  it('writes a rate with one decimal, two under 1%, and never rounds to 0% or 100% when it is not', () => {
    expect(formatPercent(0.021)).toBe('2.1%');
    expect(formatPercent(0.979)).toBe('97.9%');
    expect(formatPercent(0.0012)).toBe('0.12%');
    expect(formatPercent(0.00004)).toBe('<0.01%');
    expect(formatPercent(0.99996)).toBe('99.9%');
    expect(formatPercent(0)).toBe('0%');
    expect(formatPercent(1)).toBe('100%');
    expect(formatPercent(null)).toBe('—');
    expect(formatPercent(Number.NaN)).toBe('—');
  });

  it('shows the numerator and denominator, and a dash alone with no denominator', () => {
    expect(formatRate(0.021, 21, 1000)).toBe('2.1% (21 of 1,000)');
    expect(formatRate(1 / 3, 1, 3)).toBe('33.3% (1 of 3)');
    expect(formatRate(null, 0, 0)).toBe('—');
    expect(formatRate(0.5, 61_000, 122_000)).toBe('50.0% (61,000 of 122,000)');
    expect(formatRateCount(1234567)).toBe('1,234,567');
  });

  it('links each figure to the statuses it counts, which the Messages filter knows', () => {
    expect(STATUSES_OF.delivered).toEqual(['delivered', 'complained']);
    expect(STATUSES_OF.sent).toEqual(['sent', 'delivered', 'bounced', 'complained']);
    const figures = {
      sent: 10,
      delivered: 7,
      bounced: 2,
      complained: 1,
      delivery_rate: 0.7,
      bounce_rate: 0.2,
      complaint_rate: 1 / 7,
    };
    expect(RATES.map((r) => formatRate(r.rate(figures), figures[r.numerator], figures[r.denominator]))).toEqual([
      '70.0% (7 of 10)',
      '20.0% (2 of 10)',
      '14.3% (1 of 7)',
    ]);
  });
});
