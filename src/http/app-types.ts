import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ServerOptions as HttpsOptions } from 'node:https';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { Config } from '../config/env.js';
import type { Clock } from '../domain/clock.js';
import type { OpenedBlobs } from '../blobs/index.js';
import type { Metrics } from '../observability/metrics.js';
import type { Protection } from '../protection/index.js';
import type { SignInLimiter } from '../protection/sign-in-limiter.js';
import type { SendDeps } from '../send/accept.js';
import type { Store } from '../storage/store.js';
import type { EventNotifier } from '../events/types.js';
import type { WebhookHttp, WebhookSettings } from '../webhooks/types.js';

/**
 * What the HTTP layer needs from the outside world, built once by the composition root
 * (`buildServices` in src/cli/runtime.ts; tests use it too): buildApp builds none of it.
 */
export interface AppServices {
  config: Config;
  store: Store;
  clock: Clock;
  /** Attachment storage (MAILROOM_BLOB_URL or the data directory). */
  blobs: OpenedBlobs;
  metrics: Metrics;
  /** Rate limits and CAPTCHA: on Redis when MAILROOM_REDIS_URL is set, else in memory. */
  protection: Protection;
  /** Every recorded event after hand-off is handed to it (outbound webhooks' seam). Default: none. */
  notifier?: EventNotifier;
  /**
   * Outbound webhooks: the admin API's `POST …/webhooks/{id}/test` posts with this client.
   * Absent (apps built without buildServices): config's settings, and a client made on demand.
   */
  webhooks?: { settings: WebhookSettings; http: WebhookHttp };
  /**
   * Wrong admin tokens per client address (src/protection/sign-in-limiter.ts): `mailroom serve`
   * passes the one its SMTP submission listener counts wrong logins in, so both share a budget.
   * Absent: the admin gate makes its own.
   */
  signIns?: SignInLimiter;
  /**
   * The send path's caches and idempotency guard (createSendDeps): `mailroom serve` passes the
   * one its SMTP submission listener uses, so an HTTP send and an SMTP submission see each
   * other's in-flight keys. Absent: buildApp makes its own.
   */
  sendDeps?: SendDeps;
  /** Called after each accepted send: a worker in the same process looks at the queue at once. */
  onAccepted?: () => void;
  /** Certificate and key (MAILROOM_TLS_*): the server speaks HTTPS. Absent: plain HTTP. */
  https?: HttpsOptions;
  /** Where the app's log lines go (tests read them). Absent: standard output, as pino does. */
  logStream?: { write(line: string): void };
}

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
