import type { CustomHeader } from './custom-headers.js';
import type { WebhookDeliveryView, WebhookEndpoint } from './types.js';

/**
 * What the dispatcher and the test event need from storage (issue 13). Storage imports these
 * shapes (src/storage/webhook-deliveries.ts implements them) and src/webhooks/ never imports
 * storage, so the folders stay layered (test/repo/layers.test.ts): the Store is one of these.
 */

/** A delivery the dispatcher holds: everything its request needs. */
export interface ClaimedDelivery {
  id: number;
  org_id: string;
  endpoint_id: string;
  event_id: number | null;
  message_id: string | null;
  event_type: string;
  message_status: string | null;
  sequence: number | null;
  /** The body fixed at the first attempt; null before it. */
  payload: string | null;
  /** Attempts in this run of the retry schedule (a replay starts a new run). */
  attempts: number;
  /** This claim's lease: the outcome is recorded only while it still holds. */
  lease_until: number;
  url: string;
  /** Current first, then the previous one while its grace lasts. */
  secrets: string[];
  /** The endpoint's custom headers as they are now (an edit applies to the next attempt). */
  headers: CustomHeader[];
  event: { type: string; at: number; detail: string | null } | null;
  /** `mode`: live | test (issue 27); `simulated`: a simulator address was among its recipients. */
  message: { org_id: string; template_id: string; service_id: string; mode: string; simulated: boolean } | null;
}

/** What one attempt came to, and where the delivery goes next. */
export interface AttemptRecord {
  id: number;
  lease: number;
  /** When the attempt started. */
  at: number;
  now: number;
  status: number | null;
  durationMs: number;
  body: string | null;
  error: string | null;
  /** The request's headers, custom values masked (requestHeaders' `logged`); null when nothing was sent. */
  requestHeaders: Record<string, string> | null;
  /**
   * The body sent (stored at the first attempt; later ones keep the first); null when none
   * could be built (the event or its message is gone): nothing was sent, nothing is stored.
   */
  payload: string | null;
  next: { state: 'succeeded' } | { state: 'pending'; nextAttemptAt: number } | { state: 'failed' };
  /** The endpoint's health moves with message deliveries; a `webhook.test` leaves it alone. */
  endpoint?: { url: string; gone: boolean; disableAfterMs: number };
}

export interface RecordedAttempt {
  /** False when the claim had lost its lease: nothing was written. */
  recorded: boolean;
  /** Why the endpoint was disabled by this attempt (410, failing too long); null: it was not. */
  disabled: string | null;
}

export interface EndpointStats {
  org_id: string;
  endpoint_id: string;
  backlog: number;
  oldestPendingAgeMs: number;
}

export interface DeliveryRepoPort {
  claim(
    now: number,
    limit: number,
    leaseMs: number,
    skipEndpoints: ReadonlyArray<{ org_id: string; endpoint_id: string }>,
    perEndpoint?: number,
  ): Promise<ClaimedDelivery[]>;
  release(items: ReadonlyArray<{ id: number; lease: number }>, now: number): Promise<void>;
  recordAttempt(r: AttemptRecord): Promise<RecordedAttempt>;
  insertTest(orgId: string, endpointId: string, now: number, lease: number): Promise<number>;
  get(orgId: string, deliveryId: string): Promise<WebhookDeliveryView | undefined>;
}

export interface WebhookRepos {
  webhookDeliveries: DeliveryRepoPort;
  webhookEndpoints: { get(orgId: string, id: string): Promise<WebhookEndpoint | undefined> };
}

/** The Store as the webhooks see it. */
export interface WebhookStore extends WebhookRepos {
  transaction<T>(fn: (tx: WebhookRepos) => Promise<T>, options?: { durable?: boolean }): Promise<T>;
}
