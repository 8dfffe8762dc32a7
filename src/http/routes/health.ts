import { Type } from '@sinclair/typebox';
import { ApiError } from '../../errors/api-error.js';
import type { App, AppServices } from '../app-types.js';
import { responses } from '../schemas.js';

const Health = Type.Object({
  status: Type.Literal('ok'),
  database: Type.Literal('ok'),
  dialect: Type.String(),
  uptime_seconds: Type.Integer(),
});

/** GET /v1/health: no key; 200 when the database answers, else 503 `service_unavailable`. */
export function registerHealth(app: App, { store }: Pick<AppServices, 'store'>): void {
  const started = Date.now();
  app.get('/v1/health', {
    schema: { tags: ['service'], summary: 'Health check (database round trip)', response: responses({ 200: Health }, ['service_unavailable']) },
  }, async (request, reply) => {
    try {
      await store.ping();
    } catch (err) {
      request.log.warn({ err }, 'health check: database unreachable');
      throw new ApiError('service_unavailable', { message: 'The database is unreachable.', details: { database: 'unreachable' } });
    }
    reply.header('cache-control', 'no-store');
    return { status: 'ok' as const, database: 'ok' as const, dialect: store.dialect, uptime_seconds: Math.floor((Date.now() - started) / 1000) };
  });
}
