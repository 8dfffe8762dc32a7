import type { Metrics } from '../../observability/metrics.js';
import type { App } from '../app-types.js';

/** GET /metrics: Prometheus text format. Meant for the operator's scraper, not the public. */
export function registerMetrics(app: App, metrics: Metrics): void {
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()));
}
