import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import type { Metrics } from '../../observability/metrics.js';
import type { App } from '../app-types.js';

/**
 * GET /metrics: Prometheus text format, meant for the operator's scraper. Without a token it is
 * open to anyone who reaches the port (the README says so); with MAILROOM_METRICS_TOKEN it
 * answers only `Authorization: Bearer <token>`. The API and `mailroom worker --metrics-port`
 * register the same route.
 */
export function registerMetrics(app: App, metrics: Metrics, token?: string): void {
  const authorized = token === undefined ? undefined : bearerCheck(token);
  app.get(
    '/metrics',
    {
      schema: { hide: true },
      onRequest: async (request) => {
        if (authorized !== undefined && !authorized(request)) {
          throw new ApiError('unauthorized', {
            message: 'GET /metrics needs `Authorization: Bearer <MAILROOM_METRICS_TOKEN>`.',
            headers: { 'www-authenticate': 'Bearer realm="metrics"' },
          });
        }
      },
    },
    async (_request, reply) =>
      reply
        .type(metrics.registry.contentType)
        .header('cache-control', 'no-store')
        .send(await metrics.registry.metrics()),
  );
}

/**
 * Compares digests, not the strings: equal-length inputs for timingSafeEqual, and the time
 * taken says nothing about how much of the token a guess got right (or how long it is).
 */
function bearerCheck(token: string): (request: FastifyRequest) => boolean {
  const expected = createHash('sha256').update(token).digest();
  return (request) => {
    const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '');
    const given = createHash('sha256')
      .update(match?.[1] ?? '')
      .digest();
    return timingSafeEqual(given, expected) && match !== null;
  };
}
