import { Type, type Static } from '@sinclair/typebox';
import { retentionCutoff } from '../../domain/retention.js';
import type { App, AppServices } from '../../http/app-types.js';
import { badQuery, decodeCursor, encodeCursor, textFilter } from '../../http/history-query.js';
import { responses, Timestamp } from '../../http/schemas.js';
import { iso, queryBound } from '../../http/time.js';
import { parseJson } from '../../storage/json.js';
import type { RequestLogFilter, RequestLogRow } from '../../storage/request-log.js';
import { ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, OrgParams, requireOrganization } from './common.js';

/**
 * GET /admin/v1/organizations/{org}/request-log (issue 29): the organization's refused public API
 * requests (4xx), newest first, kept MAILROOM_REQUEST_LOG_DAYS (default 3). Recorded by
 * src/http/refused-requests.ts; `fields` holds only the allowlist of src/http/refused-fields.ts.
 */

export const RequestLogItem = Type.Object({
  id: Type.String(),
  created_at: Timestamp,
  key_id: Type.Union([Type.String(), Type.Null()], { description: "The key's id, never the key; null when none was found" }),
  method: Type.String(),
  route: Type.String({ description: 'The route pattern (`/v1/send`, `/api/v1.0/email/send`), never the URL as sent' }),
  status: Type.Integer(),
  code: Type.String({
    description:
      'The error code answered; `request_log_capped` for a row that counts the requests not logged ' +
      'in a minute past the per-organization cap (60 a minute)',
  }),
  message: Type.String(),
  fields: Type.Record(Type.String(), Type.Unknown(), {
    description:
      'Non-secret request fields: template_id, service_id, template_params (each name with the shape of its value, never ' +
      'the value), attachments and messages (counts), origin, user_agent, details (the error details answered)',
  }),
  ip: Type.Union([Type.String(), Type.Null()], { description: 'The client address (MAILROOM_TRUST_PROXY applies)' }),
});

export const RequestLogPage = Type.Object({
  items: Type.Array(RequestLogItem),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

const Bound = (description: string) => Type.String({ maxLength: 40, description });

export const RequestLogQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
  cursor: Type.Optional(Type.String({ maxLength: 2048 })),
  status: Type.Optional(Type.Integer({ minimum: 400, maximum: 499, description: 'One status, e.g. 422' })),
  code: Type.Optional(
    Type.String({ maxLength: 64, pattern: '^[a-z_]+$', description: 'An error code, e.g. recipient_suppressed' }),
  ),
  key_id: Type.Optional(Type.String({ maxLength: 64 })),
  route: Type.Optional(Type.String({ maxLength: 200, description: 'A route pattern, e.g. /v1/send' })),
  since: Type.Optional(Bound("Inclusive lower bound: an ISO 8601 date-time, or a date (YYYY-MM-DD: that day's start, UTC)")),
  until: Type.Optional(Bound('Exclusive upper bound: an ISO 8601 date-time, or a date (YYYY-MM-DD: that day included)')),
});
type RequestLogQuery = Static<typeof RequestLogQuery>;

function bound(field: 'since' | 'until', value: string): number {
  const ms = queryBound(value, field === 'since' ? 'lower' : 'upper');
  if (ms === undefined) throw badQuery(field, 'must be an ISO 8601 date-time or a date (YYYY-MM-DD)');
  return ms;
}

/** The storage filter of a validated query; `oldest` is the retention cutoff. */
export function requestLogFilter(q: RequestLogQuery, oldest: number): RequestLogFilter {
  const f: RequestLogFilter = { since: oldest };
  if (q.status !== undefined) f.status = q.status;
  if (q.code !== undefined && q.code !== '') f.code = q.code;
  if (q.key_id !== undefined && q.key_id.trim() !== '') f.key_id = textFilter('key_id', q.key_id.trim());
  if (q.route !== undefined && q.route.trim() !== '') f.route = textFilter('route', q.route.trim());
  if (q.since !== undefined) f.since = Math.max(oldest, bound('since', q.since));
  if (q.until !== undefined) f.until = bound('until', q.until);
  if (q.cursor !== undefined) {
    const c = decodeCursor(q.cursor);
    f.before = { created_at: c.created_at, id: c.id };
  }
  return f;
}

export function requestLogItem(r: RequestLogRow): Static<typeof RequestLogItem> {
  return {
    id: r.id,
    created_at: iso(r.created_at),
    key_id: r.key_id,
    method: r.method,
    route: r.route,
    status: r.status,
    code: r.code,
    message: r.message,
    fields: parseJson<Record<string, unknown>>(r.fields, `request_log.fields of ${r.id}`),
    ip: r.ip,
  };
}

export function registerRequestLogRoutes(app: App, { store, clock, config }: AppServices): void {
  app.get(
    '/organizations/:org/request-log',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "An organization's refused API requests (4xx), newest first, filtered and paged",
        description:
          'Refused requests of the public API (`/v1/…` and the EmailJS aliases) where the organization was known, kept ' +
          'MAILROOM_REQUEST_LOG_DAYS days (default 3; 0 turns the log off). Never a key, a token or a parameter value. At most ' +
          '60 rows per organization a minute; a `request_log_capped` row counts the rest.',
        params: OrgParams,
        querystring: RequestLogQuery,
        response: responses({ 200: RequestLogPage }, [...ADMIN_ERRORS, 'invalid_body']),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const q = request.query;
      const filter = requestLogFilter(q, retentionCutoff(clock.now(), config.requestLogDays));
      const rows = await store.requestLog.list(org.id, filter, q.limit + 1);
      const page = rows.slice(0, q.limit);
      const last = page[page.length - 1];
      return {
        items: page.map(requestLogItem),
        next_cursor: rows.length > q.limit && last !== undefined ? encodeCursor(last.created_at, last.id) : null,
      };
    },
  );
}
