import { describe, expect, it } from 'vitest';
import {
  filterProblems,
  filtersFromQuery,
  filtersToQuery,
  hasFilters,
  isDateBound,
  NO_FILTERS,
  splitStatuses,
  toggleStatus,
  unknownStatuses,
} from '../../ui/src/lib/message-filters.js';
import { hrefWithQuery } from '../../ui/src/lib/route-match.js';

describe('the messages list filters', () => {
  it('reads the filters from the hash query, trimmed, statuses split and deduplicated', () => {
    const f = filtersFromQuery(
      new URLSearchParams(
        'status=failed,%20bounced&status=failed&template_id=%20welcome%20&q=Ada@Example.com&from=2026-11-01&cursor=abc&other=1',
      ),
    );
    expect(f).toEqual({
      statuses: ['failed', 'bounced'],
      template_id: 'welcome',
      service_id: '',
      from: '2026-11-01',
      to: '',
      q: 'Ada@Example.com',
      recipient: '',
      subject: '',
      message_id: '',
    });
    expect(filtersFromQuery(new URLSearchParams(''))).toEqual(NO_FILTERS);
  });

  it('writes only the filters that are set, the recipient lower-cased, with the cursor when given', () => {
    const f = { ...NO_FILTERS, statuses: ['held', 'failed'], service_id: 'smtp', q: 'Ada@Example.com' };
    expect(filtersToQuery(f)).toEqual({ status: 'held,failed', service_id: 'smtp', q: 'ada@example.com' });
    expect(filtersToQuery(f, 'c1')).toEqual({ status: 'held,failed', service_id: 'smtp', q: 'ada@example.com', cursor: 'c1' });
    expect(filtersToQuery(NO_FILTERS, '')).toEqual({});
  });

  it('round-trips through a link', () => {
    const f = {
      statuses: ['held_service_error'],
      template_id: 'a b',
      service_id: '',
      from: '2026-11-01',
      to: '2026-11-02T10:00:00Z',
      q: 'x@y.z',
      recipient: 'Ada@',
      subject: 'Ärger 50%',
      message_id: 'msg_AbC-09',
    };
    const link = hrefWithQuery(['orgs', 'acme', 'messages'], filtersToQuery(f, 'next'));
    expect(link.startsWith('#/orgs/acme/messages?')).toBe(true);
    const query = new URLSearchParams(link.slice(link.indexOf('?') + 1));
    expect(filtersFromQuery(query)).toEqual(f);
    expect(query.get('cursor')).toBe('next');
  });

  it('keeps the search as typed: recipient and subject in their case, the message id trimmed only', () => {
    const f = filtersFromQuery(new URLSearchParams('recipient=Ada@&subject=%C3%84rger&message_id=%20msg_AbC%09'));
    expect([f.recipient, f.subject, f.message_id]).toEqual(['Ada@', 'Ärger', 'msg_AbC']);
    expect(filtersToQuery({ ...NO_FILTERS, message_id: ' msg_AbC ' })).toEqual({ message_id: 'msg_AbC' });
    expect(hasFilters({ ...NO_FILTERS, subject: 'x' })).toBe(true);
    expect(hasFilters({ ...NO_FILTERS, subject: '  ' })).toBe(false);
  });

  it('splits a typed status list and names the unknown statuses', () => {
    expect(splitStatuses(' Failed ,,bounced, failed')).toEqual(['failed', 'bounced']);
    expect(unknownStatuses(['failed', 'lost', 'held'])).toEqual(['lost']);
  });

  it('accepts a plain date or a date-time with its offset, as the API does', () => {
    expect(isDateBound('2026-11-25')).toBe(true);
    expect(isDateBound('2026-11-25T10:00:00Z')).toBe(true);
    expect(isDateBound('2026-11-25T10:00+02:00')).toBe(true);
    expect(isDateBound('2026-11-25T10:00:00')).toBe(false);
    expect(isDateBound('25/11/2026')).toBe(false);
    expect(isDateBound('2026-13-45')).toBe(false);
  });

  it('reports problems by field, including a range that ends before it starts', () => {
    expect(filterProblems(NO_FILTERS)).toEqual({});
    const p = filterProblems({ ...NO_FILTERS, statuses: ['nope'], from: 'yesterday' });
    expect(Object.keys(p).sort()).toEqual(['from', 'status']);
    expect(p.status).toContain('nope');
    expect(filterProblems({ ...NO_FILTERS, from: '2026-11-02', to: '2026-11-01' }).to).toBeDefined();
    expect(filterProblems({ ...NO_FILTERS, from: '2026-11-01', to: '2026-11-01' })).toEqual({});
  });

  it('knows whether any filter is set, and toggles a status keeping the order', () => {
    expect(hasFilters(NO_FILTERS)).toBe(false);
    expect(hasFilters({ ...NO_FILTERS, to: '2026-01-01' })).toBe(true);
    expect(toggleStatus(['held'], 'failed', true)).toEqual(['held', 'failed']);
    expect(toggleStatus(['held', 'failed'], 'held', true)).toEqual(['held', 'failed']);
    expect(toggleStatus(['held', 'failed'], 'held', false)).toEqual(['failed']);
  });
});
