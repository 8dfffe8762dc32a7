import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController } from 'fastify';
import type { Config } from '../config/env.js';
import type { Clock } from '../domain/clock.js';
import { ErrorEnvelope } from '../errors/envelope.js';
import { frameworkErrors, installErrorHandling, routePattern } from '../errors/handler.js';
import type { Metrics } from '../observability/metrics.js';
import type { Store } from '../storage/store.js';
import type { App } from './app-types.js';
import { registerHealth } from './routes/health.js';
import { registerMetrics } from './routes/metrics.js';

export interface MetricsServer {
  /** The port it listens on (the one asked for, or the one the OS chose for 0). */
  port: number;
  close(): Promise<void>;
}

/**
 * The listener of a `mailroom worker` process (MAILROOM_METRICS_PORT / --metrics-port): a
 * worker has no API, so without it the delivery counters of a split deployment
 * (MAILROOM_WORKER=off on the API) were exported by no process. It serves the same two routes
 * as the API, GET /metrics (behind MAILROOM_METRICS_TOKEN when set) and GET /v1/health, with the
 * same error envelope, and nothing else. It lives in http/ with the routes it serves:
 * observability/ holds the counters and imports nothing of the HTTP layer.
 */
export async function startMetricsServer(deps: {
  config: Config;
  port: number;
  store: Store;
  metrics: Metrics;
  clock: Clock;
}): Promise<MetricsServer> {
  const { config } = deps;
  const app: App = Fastify({
    logger: { level: config.logLevel },
    logController: new LogController({ disableRequestLogging: true }),
    frameworkErrors: frameworkErrors(config.docsUrl),
  }).withTypeProvider<TypeBoxTypeProvider>();
  const patterns: RegExp[] = [];
  app.addHook('onRoute', (route) => {
    if (route.url !== '*' && route.method !== 'OPTIONS') patterns.push(routePattern(route.url));
  });
  installErrorHandling(app, config.docsUrl, patterns, deps.store.health);
  app.addSchema(ErrorEnvelope);
  registerHealth(app, { store: deps.store });
  registerMetrics(app, deps.metrics, config.metricsToken);
  await app.listen({ port: deps.port, host: config.host });
  const address = app.server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : deps.port,
    close: () => app.close(),
  };
}
