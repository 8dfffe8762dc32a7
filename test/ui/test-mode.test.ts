import { describe, expect, it } from 'vitest';
import { hrefWithQuery } from '../../ui/src/lib/route-match.js';
import { formatList, formatSize } from '../../ui/src/lib/format.js';
import {
  hasInboxFilters,
  inboxFiltersFromQuery,
  inboxFiltersToQuery,
  NO_INBOX_FILTERS,
  textFiltersFromQuery,
  textFiltersToQuery,
} from '../../ui/src/lib/inbox-filters.js';
import { MODES, modeFromQuery, modeQuery } from '../../ui/src/lib/test-mode.js';

describe('test mode in the hash (issue 27)', () => {
  it('reads test only from mode=test; anything else is live, the default', () => {
    expect(modeFromQuery(new URLSearchParams('mode=test'))).toBe('test');
    expect(modeFromQuery(new URLSearchParams('mode=%20TEST%20&status=sent'))).toBe('test');
    expect(modeFromQuery(new URLSearchParams(''))).toBe('live');
    expect(modeFromQuery(new URLSearchParams('mode=live'))).toBe('live');
    expect(modeFromQuery(new URLSearchParams('mode=both'))).toBe('live');
    expect(MODES).toEqual(['live', 'test']);
  });

  it('writes test into a link and leaves live out', () => {
    expect(modeQuery('test')).toEqual({ mode: 'test' });
    expect(modeQuery('live')).toEqual({});
    expect(hrefWithQuery(['orgs', 'acme', 'messages'], { status: 'sent', ...modeQuery('test') })).toBe(
      '#/orgs/acme/messages?status=sent&mode=test',
    );
    expect(hrefWithQuery(['orgs', 'acme', 'messages'], modeQuery('live'))).toBe('#/orgs/acme/messages');
  });
});

describe('the test inbox filters', () => {
  it('reads to, template_id and q from the hash, trimmed, ignoring the rest', () => {
    expect(
      inboxFiltersFromQuery(new URLSearchParams('to=%20ada@example.com%20&template_id=welcome&q=order&cursor=c1&x=1')),
    ).toEqual({
      to: 'ada@example.com',
      template_id: 'welcome',
      q: 'order',
    });
    expect(inboxFiltersFromQuery(new URLSearchParams(''))).toEqual(NO_INBOX_FILTERS);
  });

  it('writes only the set filters and the cursor, for the link and the API alike', () => {
    expect(inboxFiltersToQuery({ to: 'ada@example.com', template_id: '', q: 'Order' }, 'c2')).toEqual({
      to: 'ada@example.com',
      q: 'Order',
      cursor: 'c2',
    });
    expect(inboxFiltersToQuery(NO_INBOX_FILTERS)).toEqual({});
    expect(inboxFiltersToQuery(NO_INBOX_FILTERS, '')).toEqual({});
    const link = hrefWithQuery(
      ['orgs', 'acme', 'test-inbox'],
      inboxFiltersToQuery({ to: 'a+b@x.test', template_id: 'w', q: '' }),
    );
    expect(inboxFiltersFromQuery(new URLSearchParams(link.split('?')[1]))).toEqual({ to: 'a+b@x.test', template_id: 'w', q: '' });
  });

  it('says whether any filter is set', () => {
    expect(hasInboxFilters(NO_INBOX_FILTERS)).toBe(false);
    expect(hasInboxFilters({ ...NO_INBOX_FILTERS, q: 'x' })).toBe(true);
    expect(hasInboxFilters({ ...NO_INBOX_FILTERS, to: 'a@b.c' })).toBe(true);
    expect(hasInboxFilters({ ...NO_INBOX_FILTERS, template_id: 'w' })).toBe(true);
  });

  it('formats a size in bytes, KB and MB (1024), a missing one as a dash', () => {
    expect(formatSize(0)).toBe('0 B');
    expect(formatSize(1023)).toBe('1023 B');
    expect(formatSize(1024)).toBe('1.0 KB');
    expect(formatSize(12_345)).toBe('12.1 KB');
    expect(formatSize(5 * 1024 * 1024)).toBe('5.0 MB');
    expect(formatSize(null)).toBe('—');
    expect(formatSize(-1)).toBe('—');
  });

  it('lists addresses on one line, an empty or missing list as a dash', () => {
    expect(formatList(['a@x.test', 'b@x.test'])).toBe('a@x.test, b@x.test');
    expect(formatList([])).toBe('—');
    expect(formatList(undefined)).toBe('—');
  });

  it('reads and writes any text filters the same way (trimmed, empty ones left out)', () => {
    expect(textFiltersFromQuery(new URLSearchParams('a=%20x%20&c=y'), ['a', 'b'])).toEqual({ a: 'x', b: '' });
    expect(textFiltersToQuery({ a: ' x ', b: '' }, 'c1')).toEqual({ a: 'x', cursor: 'c1' });
  });
});
