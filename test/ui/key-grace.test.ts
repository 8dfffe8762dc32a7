import { describe, expect, it } from 'vitest';
import { convertGrace } from '../../ui/src/lib/key-grace.js';

describe('the rotation grace period across units (review C 9)', () => {
  it('keeps the period when the unit changes: 24 hours are 1 day, 2 days 48 hours', () => {
    expect(convertGrace('24', 'hours', 'days')).toBe('1');
    expect(convertGrace('48', 'hours', 'days')).toBe('2');
    expect(convertGrace('2', 'days', 'hours')).toBe('48');
    expect(convertGrace('24', 'hours', 'hours')).toBe('24');
  });

  it('rounds hours to the nearest day, at least 1 above 0, 0 stays 0', () => {
    expect(convertGrace('36', 'hours', 'days')).toBe('2');
    expect(convertGrace('5', 'hours', 'days')).toBe('1');
    expect(convertGrace('0', 'hours', 'days')).toBe('0');
    expect(convertGrace('0', 'days', 'hours')).toBe('0');
  });

  it('never goes past the 30 days the server allows, and leaves text that is not a number as typed', () => {
    expect(convertGrace('30', 'days', 'hours')).toBe('720');
    expect(convertGrace('9999', 'hours', 'days')).toBe('30');
    expect(convertGrace('1.5', 'days', 'hours')).toBe('1.5');
    expect(convertGrace('', 'hours', 'days')).toBe('');
  });
});
