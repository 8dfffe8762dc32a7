/**
 * The messages list's filters live in the hash query (`#/orgs/acme/messages?status=failed`), so
 * a filtered view is a link an operator can share. These functions turn the query into filters,
 * filters into the query (for links) and into the admin API's query (GET …/messages, the same
 * parameters as GET /v1/history). Pure: unit-tested in test/ui/message-filters.test.ts.
 */

/**
 * Every status a message can be in, in the order the filter lists them, and `retrying`: queued
 * or sending after an attempt that failed (an outage shows here), a part of `queued`.
 */
export const STATUSES = [
  'queued',
  'retrying',
  'held',
  'held_service_error',
  'sending',
  'sent',
  'delivered',
  'bounced',
  'complained',
  'failed',
  'discarded',
] as const;

export interface MessageFilters {
  statuses: string[];
  template_id: string;
  service_id: string;
  /** YYYY-MM-DD or an ISO date-time, as the API takes them. */
  from: string;
  to: string;
  /** A recipient address (the API matches it exactly, case-insensitively): links made before the search. */
  q: string;
  /** Part of a recipient address, any case (the admin API's search). */
  recipient: string;
  /** Part of the subject, any case. */
  subject: string;
  /** One message id, as pasted: trimmed, never lower-cased (ids are case-sensitive). */
  message_id: string;
}

export const NO_FILTERS: MessageFilters = {
  statuses: [],
  template_id: '',
  service_id: '',
  from: '',
  to: '',
  q: '',
  recipient: '',
  subject: '',
  message_id: '',
};

/** The text filters, in the order of the link and the form. */
const TEXT_FILTERS = ['template_id', 'service_id', 'from', 'to', 'q', 'recipient', 'subject', 'message_id'] as const;

/** `a, b,,c` → [a, b, c]: the status list as typed or as it sits in a link. */
export function splitStatuses(text: string): string[] {
  const out: string[] = [];
  for (const part of text.split(',')) {
    const s = part.trim().toLowerCase();
    if (s !== '' && !out.includes(s)) out.push(s);
  }
  return out;
}

/** The statuses the API does not know: shown beside the field instead of a 400 from the server. */
export const unknownStatuses = (statuses: readonly string[]): string[] =>
  statuses.filter((s) => !(STATUSES as readonly string[]).includes(s));

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** Whether a bound is one the API reads: a plain date (a whole UTC day) or a date-time with its offset. */
export function isDateBound(value: string): boolean {
  if (DATE.test(value)) return !Number.isNaN(Date.parse(`${value}T00:00:00Z`));
  return DATE_TIME.test(value) && !Number.isNaN(Date.parse(value));
}

/** What is wrong with the filters, by field; empty when they can be sent. */
export function filterProblems(f: MessageFilters): Record<string, string> {
  const problems: Record<string, string> = {};
  const unknown = unknownStatuses(f.statuses);
  if (unknown.length > 0) problems.status = `Unknown status: ${unknown.join(', ')}`;
  if (f.from !== '' && !isDateBound(f.from)) problems.from = 'Use a date (YYYY-MM-DD) or a date-time with its offset';
  if (f.to !== '' && !isDateBound(f.to)) problems.to = 'Use a date (YYYY-MM-DD) or a date-time with its offset';
  if (
    problems.from === undefined &&
    problems.to === undefined &&
    f.from !== '' &&
    f.to !== '' &&
    DATE.test(f.from) &&
    DATE.test(f.to) &&
    f.from > f.to
  ) {
    problems.to = 'Must not be before "from"';
  }
  return problems;
}

/** The filters a hash query names (unknown parameters are ignored; values are trimmed). */
export function filtersFromQuery(query: URLSearchParams): MessageFilters {
  const get = (k: string) => (query.get(k) ?? '').trim();
  return {
    statuses: query
      .getAll('status')
      .flatMap(splitStatuses)
      .filter((s, i, all) => all.indexOf(s) === i),
    template_id: get('template_id'),
    service_id: get('service_id'),
    from: get('from'),
    to: get('to'),
    q: get('q'),
    recipient: get('recipient'),
    subject: get('subject'),
    message_id: get('message_id'),
  };
}

/**
 * The filters as query parameters, empty ones left out: for the hash link (with the page's
 * `cursor`) and, as they are, for the API (the same names).
 */
export function filtersToQuery(f: MessageFilters, cursor?: string): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  if (f.statuses.length > 0) out.status = f.statuses.join(',');
  for (const k of TEXT_FILTERS) if (f[k].trim() !== '') out[k] = f[k].trim();
  if (f.q.trim() !== '') out.q = f.q.trim().toLowerCase();
  if (cursor !== undefined && cursor !== '') out.cursor = cursor;
  return out;
}

/** Whether any filter is set (the list then says "no message matches" rather than "no messages yet"). */
export const hasFilters = (f: MessageFilters): boolean => f.statuses.length > 0 || TEXT_FILTERS.some((k) => f[k].trim() !== '');

/** Adds or removes one status, keeping the list's order. */
export function toggleStatus(statuses: readonly string[], status: string, on: boolean): string[] {
  if (on) return statuses.includes(status) ? [...statuses] : [...statuses, status];
  return statuses.filter((s) => s !== status);
}
