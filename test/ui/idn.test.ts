import { domainToASCII, domainToUnicode } from 'node:url';
import { describe, expect, it } from 'vitest';
import { canonicalAddress } from '../../src/domain/addresses.js';
import { readableAddress, unicodeDomain } from '../../ui/src/lib/idn.js';

/**
 * Issue 25: the UI shows stored A-label addresses readably. Its decoder must agree with the
 * server's rule (node:url, UTS 46) on every domain the server can store.
 */
describe('the UI reads IDN addresses as the server stores them', () => {
  const domains = [
    'exämple.com',
    'bücher.de',
    'faß.de',
    '例え.テスト',
    'пример.рф',
    'mañana.com.mx',
    'κόσμος.gr',
    'x\u{1F600}y.example',
    'example.com',
  ];

  it('decodes each A-label back to the U-label node:url gives', () => {
    for (const d of domains) {
      const ascii = domainToASCII(d);
      expect(unicodeDomain(ascii), d).toBe(domainToUnicode(ascii));
    }
  });

  it('shows zoë@xn--exmple-cua.com as zoë@exämple.com and leaves everything else as it is', () => {
    expect(readableAddress(canonicalAddress('Zoë@Exämple.com'))).toBe('zoë@exämple.com');
    expect(readableAddress('@xn--exmple-cua.com')).toBe('@exämple.com');
    expect(readableAddress('ann@example.org')).toBe('ann@example.org');
    expect(readableAddress('ann@xn--zz!.com')).toBe('ann@xn--zz!.com');
    expect(readableAddress('kundennummer 4711')).toBe('kundennummer 4711');
  });
});
