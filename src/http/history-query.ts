import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { canonicalAddress } from '../domain/addresses.js';
import type { Clock } from '../domain/clock.js';
import { isPlausibleMessageId } from '../domain/ids.js';
import { retentionCutoff, retentionDaysOf } from '../domain/retention.js';
import { type KeyMode, MESSAGE_STATUSES } from '../domain/types.js';
import { ApiError } from '../errors/api-error.js';
import type { HistoryFilter, HistoryStatus } from '../storage/history.js';
import type { Store } from '../storage/store.js';
import { Timestamp } from './schemas.js';
import { iso, isoOrNull, queryBound } from './time.js';
import { TemplateIdSchema } from '../domain/template-id.js';

/** What `status` takes: the stored statuses and `retrying` (src/storage/history.ts). */
const HISTORY_STATUSES: readonly HistoryStatus[] = [...MESSAGE_STATUSES, 'retrying'];

/**
 * Message history as a query and a page: the query string, its checks, the keyset cursor and
 * the page body. `GET /v1/history` (a private key, its own organization) and the admin API's
 * `GET /admin/v1/organizations/{org}/messages` (the operator UI's list) both serve it, so the
 * two never drift apart in filters, paging or errors.
 */

export const HistoryItem = Type.Object({
  message_id: Type.String(),
  status: Type.String(),
  template_id: TemplateIdSchema,
  service_id: Type.String(),
  subject: Type.Union([Type.String(), Type.Null()]),
  to: Type.Array(Type.String()),
  created_at: Timestamp,
  sent_at: Type.Union([Timestamp, Type.Null()]),
  mode: Type.Union([Type.Literal('live'), Type.Literal('test')]),
  simulated: Type.Optional(Type.Literal(true, { description: 'Present when it went to a simulator address' })),
  retrying: Type.Optional(
    Type.Literal(true, {
      description:
        'Present while the message is queued or sending after an attempt that failed (deferred, or queued again after ' +
        "its service's error): `status=retrying` lists these",
    }),
  ),
});

export const HistoryPage = Type.Object({ items: Type.Array(HistoryItem), next_cursor: Type.Union([Type.String(), Type.Null()]) });

/** Either a plain date or a date-time: an operator typing `?to=2030-01-01` means a day. */
function DateOrDateTime(description: string) {
  return Type.Union([Type.String({ format: 'date' }), Type.String({ format: 'date-time' })], { description });
}

export const HistoryQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
  cursor: Type.Optional(Type.String({ maxLength: 2048 })),
  status: Type.Optional(
    Type.String({
      maxLength: 500,
      description:
        'One status or a comma-separated list; `retrying`: queued or sending after an attempt that failed (a `deferred` ' +
        "event, or queued again after its service's error)",
    }),
  ),
  template_id: Type.Optional(Type.String({ maxLength: 64 })),
  service_id: Type.Optional(Type.String({ maxLength: 64 })),
  from: Type.Optional(
    DateOrDateTime('Inclusive lower bound: a date-time, or a plain date (YYYY-MM-DD) meaning the start of that UTC day'),
  ),
  to: Type.Optional(
    DateOrDateTime(
      'Upper bound: a date-time (exclusive), or a plain date (YYYY-MM-DD) meaning the end of that UTC day (that day included)',
    ),
  ),
  q: Type.Optional(Type.String({ maxLength: 254, description: 'Recipient e-mail address, exact match' })),
  mode: Type.Optional(
    Type.Union([Type.Literal('live'), Type.Literal('test')], {
      description:
        'Live or test messages, never both: live by default; test messages (sent with a test key) on request. ' +
        'A test key reads test messages only: test is its default, live a 403',
    }),
  ),
});
export type HistoryQuery = Static<typeof HistoryQuery>;

export const badQuery = (field: string, message: string) =>
  new ApiError('invalid_body', {
    message: `The request query is invalid: ${field} ${message}.`,
    details: { fields: [{ field, message }] },
  });

/** Opaque cursor: the (created_at, id) of the last item of the previous page. */
export function encodeCursor(createdAt: number, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
}

/** The last millisecond a Date can hold (ECMA-262 time values are within ±8.64e15 ms). */
const MAX_TIME_MS = 8.64e15;

/**
 * A created_at of a cursor this endpoint returned: a millisecond time since the epoch. 1e20 is
 * an integer too, but past PostgreSQL's bigint (a 500) and SQLite's exact integers.
 */
function isCursorTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= MAX_TIME_MS;
}

export function decodeCursor(cursor: string): { created_at: number; id: string } {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2) {
      const [createdAt, id]: unknown[] = value;
      if (isCursorTime(createdAt) && typeof id === 'string' && isPlausibleMessageId(id)) return { created_at: createdAt, id };
    }
  } catch {
    // fall through to the 400 below
  }
  throw badQuery('cursor', 'is not a cursor returned by this endpoint');
}

/**
 * The instant of a `from`/`to` that passed the date or date-time format (a plain date is a
 * whole UTC day: see queryBound). The date-time format also lets through what names no
 * instant Date.parse can read (a leap second, an hour-only or "-00" offset, a Unicode space as
 * the separator): NaN made PostgreSQL answer 500 and SQLite match nothing.
 */
function parseInstant(field: 'from' | 'to', value: string): number {
  const ms = queryBound(value, field === 'from' ? 'lower' : 'upper');
  if (ms === undefined)
    throw badQuery(
      field,
      'must be a date (YYYY-MM-DD) or a date-time that names a real instant (no leap second, offset as +hh:mm)',
    );
  return ms;
}

type Validation = NonNullable<FastifyRequest['validationError']>;

/**
 * A `from`/`to` that is neither form fails both branches of its anyOf, and Ajv reports three
 * lines for it; the client gets one per field, saying what is accepted. Other fields' issues
 * pass as they are, to the one error handler. Routes using HistoryQuery set
 * `attachValidation: true` and throw this first.
 */
export function tidyBoundErrors(error: Validation): Validation {
  const seen = new Set<string>();
  error.validation = error.validation.flatMap((v: Validation['validation'][number]) => {
    const field = v.instancePath === '/from' || v.instancePath === '/to' ? v.instancePath : undefined;
    if (field === undefined) return [v];
    if (seen.has(field)) return [];
    seen.add(field);
    return [{ ...v, keyword: 'format', message: 'must be a date (YYYY-MM-DD) or a date-time' }];
  });
  return error;
}

/** C0 and C1 control characters and DEL. */
const CONTROL = /\p{Cc}/u;

/**
 * A control character in a filter is a client bug (a stray NUL or escape), never a value worth
 * matching; PostgreSQL refuses NUL in a text parameter outright (a 500), SQLite matched nothing.
 * A 400 names the value instead, the same on both.
 */
export function textFilter(field: string, value: string): string {
  if (CONTROL.test(value)) throw badQuery(field, 'must not contain control characters');
  return value;
}

/** Live retention and test retention (MAILROOM_TEST_RETENTION_DAYS, never longer). */
export interface RetentionConfig {
  retentionDays: number;
  testRetentionDays: number;
}

/**
 * The mode a history read lists: what the query asks, else the reader's own. A test key reads
 * test messages only (decision D1: a leaked test key exposes no live recipient).
 */
export function historyMode(asked: KeyMode | undefined, readerMode: KeyMode): KeyMode {
  if (readerMode === 'test' && asked === 'live')
    throw new ApiError('forbidden', {
      message: 'A test key reads test messages only: use a live key for mode=live.',
      details: { reason: 'test_key' },
    });
  return asked ?? readerMode;
}

/** The storage filter a validated query names; nothing older than its mode's retention is ever listed. */
export function historyFilter(
  q: HistoryQuery,
  now: number,
  config: RetentionConfig,
  mode: KeyMode = q.mode ?? 'live',
): HistoryFilter {
  const filter: HistoryFilter = { mode };
  const retentionDays = retentionDaysOf(mode, config);
  if (q.status !== undefined) {
    const statuses = q.status
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const unknown = statuses.filter((s) => !(HISTORY_STATUSES as readonly string[]).includes(s));
    if (unknown.length > 0 || statuses.length === 0)
      throw badQuery('status', `must be one or more of ${HISTORY_STATUSES.join(', ')}`);
    filter.statuses = statuses as HistoryStatus[];
  }
  if (q.template_id !== undefined) filter.template_id = textFilter('template_id', q.template_id);
  if (q.service_id !== undefined) filter.service_id = textFilter('service_id', q.service_id);
  const retentionStart = retentionCutoff(now, retentionDays);
  filter.from = Math.max(retentionStart, q.from !== undefined ? parseInstant('from', q.from) : retentionStart);
  if (q.to !== undefined) filter.to = parseInstant('to', q.to);
  // Surrounding whitespace is trimmed as before; only what is left must be free of controls.
  if (q.q !== undefined) filter.recipient = canonicalAddress(textFilter('q', q.q.trim()));
  if (q.cursor !== undefined) filter.before = decodeCursor(q.cursor);
  return filter;
}

/**
 * One page of an organization's history, newest first, keyset-paginated on (created_at, id) so
 * a page boundary never skips or repeats an item however many messages arrive meanwhile.
 */
export async function historyPage(
  deps: { store: Store; clock: Clock; config: RetentionConfig },
  orgId: string,
  q: HistoryQuery,
  readerMode: KeyMode = 'live',
  search: Pick<HistoryFilter, 'recipientContains' | 'subjectContains' | 'messageId'> = {},
): Promise<Static<typeof HistoryPage>> {
  const { store } = deps;
  const filter = { ...historyFilter(q, deps.clock.now(), deps.config, historyMode(q.mode, readerMode)), ...search };
  // One row more than the page tells whether another page exists.
  const rows = await store.messages.history(orgId, filter, q.limit + 1);
  const page = rows.slice(0, q.limit);
  const to = await store.messages.toAddresses(page.map((r) => r.id));
  const last = page[page.length - 1];
  return {
    items: page.map((r) => ({
      message_id: r.id,
      status: r.status,
      template_id: r.template_id,
      service_id: r.service_id,
      subject: r.subject,
      to: to.get(r.id) ?? [],
      created_at: iso(r.created_at),
      sent_at: isoOrNull(r.sent_at),
      mode: r.mode,
      ...(r.simulated ? { simulated: true as const } : {}),
      ...(r.retrying ? { retrying: true as const } : {}),
    })),
    next_cursor: rows.length > q.limit && last !== undefined ? encodeCursor(last.created_at, last.id) : null,
  };
}
