import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController } from 'fastify';
import { registerAdminRoutes } from './admin/routes/index.js';
import { randomToken } from './domain/ids.js';
import { ErrorEnvelope } from './errors/envelope.js';
import { clientErrorHandler, frameworkErrors, installErrorHandling, routePattern } from './errors/handler.js';
import { installBodyLimits } from './http/body-limits.js';
import { installJsonBodyParser } from './http/json-body.js';
import { loggedPath } from './http/request-log.js';
import { installRequestLog } from './http/refused-requests.js';
import type { App, AppServices } from './http/app-types.js';
import { registerDocs } from './http/routes/docs.js';
import { registerHealth } from './http/routes/health.js';
import { registerHistory } from './http/routes/history.js';
import { registerMetrics } from './http/routes/metrics.js';
import { registerMessages } from './http/routes/messages.js';
import { registerProviderEventsRoute } from './http/routes/provider-events.js';
import { registerPublicConfig } from './http/routes/public-config.js';
import { registerSend } from './http/routes/send.js';
import { registerSendBatch } from './http/routes/send-batch.js';
import { registerSendForm } from './http/routes/send-form.js';
import { registerUploads } from './http/routes/uploads.js';
import { registerTemplateRender } from './http/routes/template-render.js';
import { registerTemplates, TemplateResource } from './http/routes/templates.js';
import { registerTestInbox } from './http/routes/test-inbox.js';
import { registerUi } from './http/ui-static.js';
import { registerTurnstileWidget } from './http/routes/turnstile-widget.js';
import { validatorCompiler } from './http/validation.js';
import { createSendDeps } from './send/accept.js';
import { WEBHOOK_COMPONENT_SCHEMAS, webhookDocs } from './webhooks/openapi.js';
import { SendAccepted } from './send/request.js';

/**
 * Request ids tie log lines together; they need to be unique, not secret: a random prefix per
 * process and a counter (a random id per request cost ~8 µs).
 */
const REQUEST_ID_PREFIX = `req_${randomToken(6)}`;
let requestCounter = 0;
const nextRequestId = (): string => `${REQUEST_ID_PREFIX}.${(requestCounter++).toString(36)}`;

export type { AppServices } from './http/app-types.js';

/** Headers a browser script may read from our responses (EmailJS's SDK reads none, ours do). */
const EXPOSED_HEADERS = ['X-Mail-Message-Id', 'X-Mail-Status', 'Retry-After', 'X-Request-Id'];

/**
 * Builds the whole HTTP API over services built elsewhere (src/cli/runtime.ts), and owns none of
 * them. It never listens: `mailroom serve` does, and tests call `inject()` or
 * `listen({ port: 0 })` themselves.
 */
export async function buildApp(services: AppServices): Promise<App> {
  const { config, metrics, protection, blobs } = services;
  const app = Fastify({
    logger: { level: config.logLevel, ...(services.logStream === undefined ? {} : { stream: services.logStream }) },
    // Fastify's two lines per request cost ~35% of throughput here (README, Performance); one line
    // per response in onResponse below is far cheaper.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimitBytes,
    genReqId: nextRequestId,
    trustProxy: config.trustProxy.length > 0 ? [...config.trustProxy] : false,
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors: frameworkErrors(config.docsUrl),
    clientErrorHandler: clientErrorHandler(config.docsUrl),
    // With MAILROOM_TLS_* an https.Server (SIGHUP swaps its context: src/http/tls.ts); null: plain HTTP.
    https: services.https ?? null,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // Only JSON (and, on the form routes, multipart) bodies: a JSON text sent as text/plain is a
  // wrong content type (400 bad_request), not a body that fails the schema.
  app.removeContentTypeParser('text/plain');
  installJsonBodyParser(app);

  const patterns: RegExp[] = [];
  app.addHook('onRoute', (route) => {
    if (route.url !== '*' && route.method !== 'OPTIONS') patterns.push(routePattern(route.url));
  });
  const onRefused = installRequestLog(app, { ...services, days: config.requestLogDays });
  installErrorHandling(app, config.docsUrl, patterns, services.store.health, onRefused);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    // Never a secret: no query (`?token=` status tokens, upload signatures), no events token (src/http/request-log.ts).
    request.log.info(
      { method: request.method, path: loggedPath(request), status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request',
    );
  });

  // Browsers call this API from any origin; whether an origin may *send* is the allowed-origins
  // rule of each organization, checked per request. Errors carry these headers too.
  await app.register(cors, {
    origin: true,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 86_400,
    strictPreflight: false,
  });
  // After CORS, so that a browser can read the 413 too.
  installBodyLimits(app, config.bodyLimitBytes);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'mailroom',
        version: '1.0.0',
        description: `Transactional email API. Errors: ${config.docsUrl}/reference/errors/`,
      },
      servers: [{ url: config.baseUrl }],
      components: {
        securitySchemes: {
          privateKey: { type: 'http', scheme: 'bearer', description: 'Private key sk_…' },
          publicKey: { type: 'apiKey', in: 'header', name: 'X-Mail-Public-Key', description: 'Public key pk_…' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'MAILROOM_ADMIN_TOKEN (admin API only)' },
          adminSession: {
            type: 'apiKey',
            in: 'cookie',
            name: 'mailroom_session',
            description:
              "The operator UI's session (POST /admin/v1/session). Writes made with it must also send X-CSRF-Token and a " +
              'same-origin Origin.',
          },
        },
        schemas: WEBHOOK_COMPONENT_SCHEMAS,
      },
      // What mailroom posts to the endpoints organizations register (issue 13).
      webhooks: webhookDocs(),
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  app.addSchema(ErrorEnvelope);
  app.addSchema(TemplateResource);
  app.addSchema(SendAccepted);

  registerDocs(app);
  registerHealth(app, services);
  registerPublicConfig(app, services);
  registerTurnstileWidget(app, services);
  registerTemplates(app, services);
  const sendDeps =
    services.sendDeps ??
    createSendDeps({
      store: services.store,
      clock: services.clock,
      config,
      blobs: blobs.blobs,
      metrics,
      protection,
      onAccepted: services.onAccepted,
    });
  registerSend(app, sendDeps);
  registerSendBatch(app, sendDeps);
  registerSendForm(app, sendDeps);
  registerTemplateRender(app, sendDeps);
  registerUploads(app, { ...services, blobs: blobs.blobs, uploadSecret: blobs.uploadSecret, protection });
  registerMessages(app, services);
  registerHistory(app, services);
  registerTestInbox(app, services);
  await registerProviderEventsRoute(app, services);
  registerMetrics(app, metrics, config.metricsToken);
  await app.register(async (admin) => registerAdminRoutes(admin, services, sendDeps), { prefix: '/admin/v1' });
  await registerUi(app, services);

  return app;
}
