import { Type } from '@sinclair/typebox';
import { unavailableError } from '../../errors/unavailable.js';
import type { App, AppServices } from '../app-types.js';
import { responses } from '../schemas.js';
import { fromDatabase } from '../../errors/storage-trouble.js';

const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')], {
    description:
      '`degraded`: the database answers but refused a write for lack of space ' +
      '(storage `full`); sends answer 503 `storage_full` until a write succeeds again.',
  }),
  database: Type.Literal('ok'),
  storage: Type.Union([Type.Literal('ok'), Type.Literal('full')]),
  /** When the storage first refused a write of this spell (ISO 8601); only while `full`. */
  storage_full_since: Type.Optional(Type.String({ format: 'date-time' })),
  dialect: Type.String(),
  uptime_seconds: Type.Integer(),
});

/** How long the health check waits for the database's answer: a load balancer's probe must not hang. */
const PING_BOUND_MS = 3_000;

/**
 * GET /v1/health: no key.
 * - 200 `ok`: the database answers and nothing refused a write.
 * - 200 `degraded`, `storage: "full"`: the database answers, but the last write failed for lack
 *   of space and none has committed since. Still 200: reads (message status, history) work, and
 *   the instance is no worse than any other on the same database or disk, so a load balancer
 *   taking it out of rotation would help nobody; sends answer 503 `storage_full` themselves.
 * - 503 `service_unavailable`, `details.reason: "database_unavailable"`, `Retry-After`: the
 *   database does not answer (within 3 s); nothing but this check can be served.
 */
export function registerHealth(app: App, { store }: Pick<AppServices, 'store'>): void {
  const started = Date.now();
  app.get(
    '/v1/health',
    {
      schema: {
        tags: ['service'],
        summary: 'Health check (database round trip, storage state)',
        response: responses({ 200: Health }, ['service_unavailable']),
      },
    },
    async (_request, reply) => {
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(fromDatabase(new Error('timeout exceeded when trying to connect'))), PING_BOUND_MS);
      });
      reply.header('cache-control', 'no-store');
      try {
        await Promise.race([store.ping(), bound]);
      } catch (err) {
        store.health.report(err);
        const since = store.health.current()?.since;
        throw unavailableError('database_unavailable', {
          database: 'unreachable',
          ...(since === undefined ? {} : { since: new Date(since).toISOString() }),
        });
      } finally {
        clearTimeout(timer);
      }
      const trouble = store.health.current();
      const full = trouble?.kind === 'storage_full';
      return {
        status: full ? ('degraded' as const) : ('ok' as const),
        database: 'ok' as const,
        storage: full ? ('full' as const) : ('ok' as const),
        ...(full ? { storage_full_since: new Date(trouble.since).toISOString() } : {}),
        dialect: store.dialect,
        uptime_seconds: Math.floor((Date.now() - started) / 1000),
      };
    },
  );
}
