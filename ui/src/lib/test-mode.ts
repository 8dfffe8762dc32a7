/**
 * Test mode in the hash (issue 27): the messages list and the overview show live messages unless
 * the link says `mode=test` (never both: the server counts them apart), and the test inbox keeps
 * its filters (`to`, `template_id`, `q`) and page (`cursor`) there too, so every view is a link.
 * Pure: unit-tested in test/ui/test-mode.test.ts.
 */
import { allOf, type Query } from '../api/shapes.js';

export type Mode = NonNullable<Query<'/organizations/{org}/messages', 'get'>['mode']>;
export const MODES = allOf<Mode>()(['live', 'test']);

/** The mode a hash query names: `mode=test` is test, anything else (or nothing) live. */
export const modeFromQuery = (query: URLSearchParams): Mode =>
  query.get('mode')?.trim().toLowerCase() === 'test' ? 'test' : 'live';

/** The mode as a link's query: live is the default, so it is left out (`{}`), test is `{mode: 'test'}`. */
export const modeQuery = (mode: Mode): { mode?: 'test' } => (mode === 'test' ? { mode: 'test' } : {});

export interface InboxFilters {
  /** A recipient address (to, cc or bcc; the server matches it exactly). */
  to: string;
  template_id: string;
  /** Text in the subject, the sender or an address. */
  q: string;
}

export const NO_INBOX_FILTERS: InboxFilters = { to: '', template_id: '', q: '' };

/** The inbox filters a hash query names, trimmed (other parameters are ignored). */
export function inboxFiltersFromQuery(query: URLSearchParams): InboxFilters {
  const get = (k: string) => (query.get(k) ?? '').trim();
  return { to: get('to'), template_id: get('template_id'), q: get('q') };
}

/** The filters (and the page's cursor) as query parameters, empty ones left out: for the link and the API alike. */
export function inboxFiltersToQuery(f: InboxFilters, cursor?: string): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  if (f.to !== '') out.to = f.to;
  if (f.template_id !== '') out.template_id = f.template_id;
  if (f.q !== '') out.q = f.q;
  if (cursor !== undefined && cursor !== '') out.cursor = cursor;
  return out;
}

/** Whether any filter is set: an empty page then says "nothing matches", not "send with a test key". */
export const hasInboxFilters = (f: InboxFilters): boolean => f.to !== '' || f.template_id !== '' || f.q !== '';

/** `12345` → `12.1 KB`: a captured message's size as an operator reads it (1 KB = 1024 bytes, as mail clients count). */
export function formatSize(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes) || bytes < 0) return '—';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
