import { describe, expect, it } from 'vitest';
import { formatAge, formatCount, formatTime } from '../../ui/src/lib/format.js';
import { href, hrefWithQuery, matchRoute, splitHash } from '../../ui/src/lib/route-match.js';

const PATTERNS = ['/', '/orgs', '/orgs/:org', '/orgs/:org/templates', '/orgs/:org/templates/:id'];

describe('the UI hash router', () => {
  it('splits a hash into path and query, with / for an empty hash', () => {
    expect(splitHash('')).toEqual(['/', '']);
    expect(splitHash('#')).toEqual(['/', '']);
    expect(splitHash('#/orgs/acme?status=failed')).toEqual(['/orgs/acme', 'status=failed']);
  });

  it('matches the pattern with the same number of segments and decodes parameters', () => {
    const m = matchRoute(PATTERNS, '#/orgs/a%20b/templates/welcome?x=1');
    expect(m?.pattern).toBe('/orgs/:org/templates/:id');
    expect(m?.params).toEqual({ org: 'a b', id: 'welcome' });
    expect(m?.query.get('x')).toBe('1');
    expect(matchRoute(PATTERNS, '#/')?.pattern).toBe('/');
    expect(matchRoute(PATTERNS, '#/orgs/acme/unknown')).toBeUndefined();
  });

  it('refuses a malformed escape instead of throwing', () => {
    expect(matchRoute(PATTERNS, '#/orgs/%E0%A4%A')).toBeUndefined();
  });

  it('encodes each segment of a link, so an id cannot add path segments', () => {
    expect(href('orgs', 'a/b', 'templates')).toBe('#/orgs/a%2Fb/templates');
    expect(matchRoute(PATTERNS, href('orgs', 'a/b'))?.params.org).toBe('a/b');
    expect(hrefWithQuery(['orgs', 'acme', 'messages'], { status: 'held', q: '', cursor: undefined })).toBe(
      '#/orgs/acme/messages?status=held',
    );
  });
});

describe('the UI formatters', () => {
  it('formats times, counts and ages', () => {
    expect(formatTime('2026-11-25T18:52:06.123Z')).toBe('2026-11-25 18:52:06 UTC');
    expect(formatTime(null)).toBe('—');
    expect(formatTime('not a time')).toBe('not a time');
    expect(formatCount(1234567)).toBe('1,234,567');
    expect(formatAge(42)).toBe('42 s');
    expect(formatAge(3 * 3600 + 5 * 60)).toBe('3 h 5 min');
    expect(formatAge(2 * 86400 + 4 * 3600)).toBe('2 d 4 h');
  });
});
