import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiError } from '../errors/api-error.js';
import type { Store } from '../storage/store.js';
import { keyNamedBy, keyValueOf } from './auth.js';
import { refusedFields, scrubSecrets } from './refused-fields.js';
import { RequestRecorder } from './request-recorder.js';
import type { Metrics } from '../observability/metrics.js';
import type { Clock } from '../domain/clock.js';

/**
 * Which refusals reach the request log (issue 29), called by the one error handler
 * (src/errors/handler.ts) for every 4xx it answers. Only the public API (`/v1/…` and the
 * EmailJS aliases under `/api/v1.0/`), never the admin API, and only where the organization is
 * known: the request's key was found (revoked and expired keys too: the operator wants to see
 * which server still sends one), or, for a request refused before its route looked the key up
 * (a body that fails the schema), a lookup of the key it carries finds one, off the answer's path.
 * A 401 for a key nobody issued has no organization and is not recorded.
 */

const PUBLIC_PREFIXES = ['/v1/', '/api/v1.0/'];
const MESSAGE_CHARS = 500;

type Known = { org_id: string; key_id: string | null };

function isPublicRoute(route: string | undefined): route is string {
  return route !== undefined && PUBLIC_PREFIXES.some((p) => route.startsWith(p));
}

function bodyKeys(request: FastifyRequest): { user_id?: string; accessToken?: string } {
  const b = request.body;
  if (typeof b !== 'object' || b === null) return {};
  const { user_id, accessToken } = b as Record<string, unknown>;
  return {
    ...(typeof user_id === 'string' ? { user_id } : {}),
    ...(typeof accessToken === 'string' ? { accessToken } : {}),
  };
}

/** What the handler calls for each 4xx; never throws, never waits. */
export type RefusalListener = (request: FastifyRequest, err: ApiError) => void;

export function refusalListener(recorder: RequestRecorder, store: Store, log: FastifyInstance['log']): RefusalListener {
  const listen: RefusalListener = (request, err) => {
    const route = request.routeOptions.url;
    if (err.status < 400 || err.status >= 500 || !isPublicRoute(route)) return;
    const entry = (known: Known) => ({
      org_id: known.org_id,
      key_id: known.key_id,
      method: request.method,
      route,
      status: err.status,
      code: err.code,
      message: scrubSecrets(err.message.slice(0, MESSAGE_CHARS)),
      fields: refusedFields(request, err),
      ip: request.ip ?? null,
    });
    const named = keyNamedBy(request);
    if (named !== undefined) return recorder.record(entry(named));
    // Only a body that failed the schema: a 401 names no organization, and a 413 is refused before
    // its body is read precisely so that it costs nothing (test/http/body-limits: no key lookup).
    if (err.code !== 'invalid_body') return;
    const value = keyValueOf(request, bodyKeys(request));
    if (value === undefined) return;
    const pending = entry({ org_id: '', key_id: null });
    store.catalog.keyByValue(value).then(
      (key) => {
        if (key !== undefined) recorder.record({ ...pending, org_id: key.org_id, key_id: key.id });
      },
      (e: unknown) => log.debug({ err: e instanceof Error ? e.message : String(e) }, 'request log: key lookup failed'),
    );
  };
  // Whatever goes wrong here (details that do not serialise), the answer goes out as it would have.
  return (request, err) => {
    try {
      listen(request, err);
    } catch (e) {
      log.warn({ err: e instanceof Error ? e.message : String(e) }, 'request log: refusal not recorded');
    }
  };
}

/** The recorders of built apps, for tests that flush one (requestRecorderOf). */
const recorders = new WeakMap<object, RequestRecorder>();

export function requestRecorderOf(app: object): RequestRecorder | undefined {
  return recorders.get(app);
}

/**
 * The app's request log: a recorder flushed on its timer and on the app's close (serve closes the
 * app before the store). Undefined when MAILROOM_REQUEST_LOG_DAYS is 0 (the log is off).
 */
export function installRequestLog(
  app: FastifyInstance,
  deps: { store: Store; clock: Clock; metrics: Metrics; days: number },
): RefusalListener | undefined {
  if (deps.days === 0) return undefined;
  const recorder = new RequestRecorder({
    store: deps.store,
    clock: deps.clock,
    logger: app.log,
    registry: deps.metrics.registry,
  });
  recorder.start();
  recorders.set(app, recorder);
  app.addHook('onClose', () => recorder.close());
  return refusalListener(recorder, deps.store, app.log);
}
