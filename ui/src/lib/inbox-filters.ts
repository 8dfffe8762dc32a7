/**
 * The test inbox's filters (issue 27) in the hash query (`#/orgs/acme/test-inbox?to=…&cursor=…`), so
 * a filtered view is a link. Each is a trimmed text; the same names go to the admin API
 * (GET …/test-inbox). Pure: unit-tested in test/ui/test-mode.test.ts.
 *
 * Careful: here `to` is a recipient address (to, cc or bcc), while on the Messages page
 * (./message-filters.ts) the recipient is `q` and `to` is the last day. The names are the API's
 * own, so a link hand-edited from one page to the other means something else.
 */

export const INBOX_FILTER_KEYS = ['to', 'template_id', 'q'] as const;

export interface InboxFilters {
  /** A recipient address (to, cc or bcc; the server matches it exactly). */
  to: string;
  template_id: string;
  /** Text in the subject, the sender or an address. */
  q: string;
}

export const NO_INBOX_FILTERS: InboxFilters = { to: '', template_id: '', q: '' };

/** The text filters `keys` a hash query names, each trimmed ('' when absent; other parameters are ignored). */
export function textFiltersFromQuery<K extends string>(query: URLSearchParams, keys: readonly K[]): Record<K, string> {
  return Object.fromEntries(keys.map((k) => [k, (query.get(k) ?? '').trim()])) as Record<K, string>;
}

/** Text filters (and a page's cursor) as query parameters, trimmed, empty ones left out: for the link and the API alike. */
export function textFiltersToQuery(f: object, cursor?: string): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(f)) if (typeof v === 'string' && v.trim() !== '') out[k] = v.trim();
  if (cursor !== undefined && cursor !== '') out.cursor = cursor;
  return out;
}

/** The inbox filters a hash query names, trimmed (other parameters are ignored). */
export const inboxFiltersFromQuery = (query: URLSearchParams): InboxFilters => textFiltersFromQuery(query, INBOX_FILTER_KEYS);

/** The filters (and the page's cursor) as query parameters, empty ones left out: for the link and the API alike. */
export const inboxFiltersToQuery = (f: InboxFilters, cursor?: string): Record<string, string | undefined> =>
  textFiltersToQuery(f, cursor);

/** Whether any filter is set: an empty page then says "nothing matches", not "send with a test key". */
export const hasInboxFilters = (f: InboxFilters): boolean => Object.values(f).some((v) => v !== '');
