import { Type } from '@sinclair/typebox';
import { MESSAGE_STATUSES, type MessageStatus } from '../../domain/types.js';
import { ApiError } from '../../errors/api-error.js';
import type { HistoryFilter } from '../../storage/messages.js';
import type { App, AppServices } from '../app-types.js';
import { authenticate, requirePrivateKey } from '../auth.js';
import { responses, Timestamp } from '../schemas.js';
import { iso, isoOrNull } from '../time.js';

const HistoryItem = Type.Object({
  message_id: Type.String(),
  status: Type.String(),
  template_id: Type.String(),
  service_id: Type.String(),
  subject: Type.Union([Type.String(), Type.Null()]),
  to: Type.Array(Type.String()),
  created_at: Timestamp,
  sent_at: Type.Union([Timestamp, Type.Null()]),
});

const Query = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
  cursor: Type.Optional(Type.String({ maxLength: 2048 })),
  status: Type.Optional(Type.String({ maxLength: 500, description: 'One status or a comma-separated list' })),
  template_id: Type.Optional(Type.String({ maxLength: 64 })),
  service_id: Type.Optional(Type.String({ maxLength: 64 })),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Inclusive lower bound' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Exclusive upper bound' })),
  q: Type.Optional(Type.String({ maxLength: 254, description: 'Recipient e-mail address, exact match' })),
});

const badQuery = (field: string, message: string) =>
  new ApiError('invalid_body', { message: `The request query is invalid: ${field} ${message}.`, details: { fields: [{ field, message }] } });

/** Opaque cursor: the (created_at, id) of the last item of the previous page. */
export function encodeCursor(createdAt: number, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
}

function decodeCursor(cursor: string): { created_at: number; id: string } {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && Number.isInteger(value[0]) && typeof value[1] === 'string') {
      return { created_at: value[0] as number, id: value[1] };
    }
  } catch {
    // fall through to the 400 below
  }
  throw badQuery('cursor', 'is not a cursor returned by this endpoint');
}

/**
 * GET /v1/history: private key, newest first, keyset pagination on (created_at, id), so a page
 * boundary never skips or repeats an item however many messages arrive meanwhile.
 */
export function registerHistory(app: App, { store, clock, config }: AppServices): void {
  app.get('/v1/history', {
    schema: {
      tags: ['messages'],
      summary: 'Message history, newest first',
      security: [{ privateKey: [] }],
      querystring: Query,
      response: responses({
        200: Type.Object({ items: Type.Array(HistoryItem), next_cursor: Type.Union([Type.String(), Type.Null()]) }),
      }, ['invalid_body', 'unauthorized', 'invalid_public_key', 'invalid_private_key', 'private_key_required', 'private_key_in_browser', 'rate_limited']),
    },
  }, async (request) => {
    const caller = await authenticate(request, store);
    requirePrivateKey(request, caller);
    const q = request.query;
    const filter: HistoryFilter = {};
    if (q.status !== undefined) {
      const statuses = q.status.split(',').map((s) => s.trim()).filter(Boolean);
      const unknown = statuses.filter((s) => !(MESSAGE_STATUSES as readonly string[]).includes(s));
      if (unknown.length > 0 || statuses.length === 0) throw badQuery('status', `must be one or more of ${MESSAGE_STATUSES.join(', ')}`);
      filter.statuses = statuses as MessageStatus[];
    }
    if (q.template_id !== undefined) filter.template_id = q.template_id;
    if (q.service_id !== undefined) filter.service_id = q.service_id;
    const retentionStart = clock.now() - config.retentionDays * 86_400_000;
    filter.from = Math.max(retentionStart, q.from !== undefined ? Date.parse(q.from) : retentionStart);
    if (q.to !== undefined) filter.to = Date.parse(q.to);
    if (q.q !== undefined) filter.recipient = q.q.trim().toLowerCase();
    if (q.cursor !== undefined) filter.before = decodeCursor(q.cursor);

    // One row more than the page tells whether another page exists.
    const rows = await store.messages.history(caller.org.id, filter, q.limit + 1);
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
      })),
      next_cursor: rows.length > q.limit && last !== undefined ? encodeCursor(last.created_at, last.id) : null,
    };
  });
}
