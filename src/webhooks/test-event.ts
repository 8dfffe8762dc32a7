import type { Clock } from '../domain/clock.js';
import { requestHeaders } from './custom-headers.js';
import { LEASE_MARGIN_MS } from './dispatcher.js';
import { testEventPayload } from './payload.js';
import type { WebhookStore } from './ports.js';
import { signingSecrets, webhookHeaders } from './signing.js';
import type { WebhookHttp, WebhookSettings } from './types.js';

export interface TestEventDeps {
  store: WebhookStore;
  clock: Clock;
  http: WebhookHttp;
  settings: WebhookSettings;
}

export interface TestEventResult {
  /** `whd_<n>`: the log keeps it like any delivery. */
  delivery_id: string;
  /** The receiver answered 2xx. */
  ok: boolean;
  status: number | null;
  duration_ms: number;
  error: string | null;
}

/**
 * `POST …/webhooks/{id}/test` (issue 13): a signed `webhook.test` posted now, whatever the
 * endpoint's state, recorded in the log as a delivery with its one attempt (no retries; it does
 * not count toward the endpoint's failures). The caller has checked the endpoint exists: one
 * deleted meanwhile is an error thrown here.
 */
export async function sendTestEvent(deps: TestEventDeps, orgId: string, endpointId: string): Promise<TestEventResult> {
  const { store, clock, http, settings } = deps;
  const endpoint = await store.webhookEndpoints.get(orgId, endpointId);
  if (endpoint === undefined) throw new Error(`webhook endpoint ${orgId}/${endpointId} does not exist`);
  const at = clock.now();
  const lease = at + settings.attemptTimeoutMs + LEASE_MARGIN_MS;
  const id = await store.webhookDeliveries.insertTest(orgId, endpointId, at, lease);
  const payload = testEventPayload(orgId, endpointId, at);
  const secrets = signingSecrets(endpoint, at);
  const headers = requestHeaders(endpoint.headers, webhookHeaders(secrets, `test_${id}`, Math.floor(at / 1000), payload));
  const result = await http.post(endpoint.url, headers.sent, payload);
  const ok = result.status !== null && result.status >= 200 && result.status < 300;
  const error = result.error ?? (ok ? null : `HTTP ${result.status ?? 'error'}`);
  await store.transaction((tx) =>
    tx.webhookDeliveries.recordAttempt({
      id,
      lease,
      at,
      now: clock.now(),
      status: result.status,
      durationMs: result.durationMs,
      body: result.body,
      error,
      payload,
      requestHeaders: headers.logged,
      next: ok ? { state: 'succeeded' } : { state: 'failed' },
    }),
  );
  return { delivery_id: `whd_${id}`, ok, status: result.status, duration_ms: result.durationMs, error };
}
