import { describe, expect, it } from 'vitest';
import { parseMailgun } from '../../src/events/sources/mailgun.js';
import { parsePostmark } from '../../src/events/sources/postmark.js';
import { canonicalJson, digestKey, timeOf } from '../../src/events/sources/wire.js';

const NOW = Date.parse('2026-11-25T12:00:00Z');
const deep = (depth: number): unknown => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`);

describe('event times from untrusted bodies', () => {
  it('ISO dates and epoch seconds inside 2000-01-01 .. receipt + 1 day are read', () => {
    expect(timeOf('2026-11-25T11:00:00Z', NOW)).toBe(NOW - 3600_000);
    expect(timeOf(1795600000.5, NOW)).toBe(1795600000500);
    expect(timeOf('2000-01-01T00:00:00Z', NOW)).toBe(Date.UTC(2000, 0, 1));
    expect(timeOf(NOW / 1000 + 86_400, NOW)).toBe(NOW + 86_400_000);
  });

  it('anything else is the fallback: the receipt time unless another is given', () => {
    for (const v of [
      1e300,
      -1e300,
      -5,
      0,
      Number.NaN,
      Infinity,
      'NaN',
      '1e300',
      '+275760-09-13T00:00:00Z',
      '1999-12-31T23:59:59Z',
      NOW / 1000 + 86_401,
      'x'.repeat(100),
      null,
      {},
      [1],
    ]) {
      expect(timeOf(v, NOW)).toBe(NOW);
    }
    expect(timeOf(1e300, NOW, NOW - 5)).toBe(NOW - 5);
  });
});

describe('digest keys of untrusted JSON', () => {
  it('the canonical form sorts keys and stops at a fixed depth, so 200k levels cannot overflow the stack', () => {
    expect(canonicalJson({ b: 1, a: [true, null, 'x'] })).toBe('{"a":[true,null,"x"],"b":1}');
    expect(canonicalJson(deep(200_000))).toContain('"\u2026"');
    expect(digestKey('event', { b: 1, a: 2 })).toBe(digestKey('event', { a: 2, b: 1 }));
    expect(digestKey('event', { a: 1 })).not.toBe(digestKey('event', { a: 2 }));
    // Scalars only: the same text as before bounded keys existed, so stored keys still match.
    expect(canonicalJson(['m', 'a@b.example', '2026-01-01T00:00:00Z'])).toBe(
      JSON.stringify(['m', 'a@b.example', '2026-01-01T00:00:00Z']),
    );
  });

  it('raw bytes are digested as they are', () => {
    expect(digestKey('Bounce', Buffer.from('{"a":1}'))).not.toBe(digestKey('Bounce', Buffer.from('{"a": 1}')));
  });

  it('a Postmark bounce without ID, deeply nested, gets a key of its bytes; without bytes, of its bounded form', () => {
    const nested = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    const text = `{"RecordType":"Bounce","Type":"HardBounce","Email":"a@b.example","Content":${nested}}`;
    const body: unknown = JSON.parse(text);
    const [withBytes] = parsePostmark(body, NOW, Buffer.from(text));
    expect(withBytes?.eventKey).toBe(digestKey('Bounce', Buffer.from(text)));
    expect(parsePostmark(body, NOW)[0]?.eventKey).toMatch(/^Bounce:[0-9a-f]{64}$/);
  });

  it('a Mailgun event without id gets a digest key; with one, its id', () => {
    const data = { event: 'delivered', recipient: 'a@b.example', timestamp: 1795600000, nested: deep(50_000) };
    const [event] = parseMailgun(data, NOW);
    expect(event?.eventKey).toMatch(/^event:[0-9a-f]{64}$/);
    expect(event?.at).toBe(1795600000000);
    expect(parseMailgun({ ...data, id: 'mg-1' }, NOW)[0]?.eventKey).toBe('mg-1');
  });
});
