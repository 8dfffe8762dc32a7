import { ALERT_EVENT_TYPES } from '../domain/alerts.js';
import { TIMELINE_EVENT_TYPES } from '../domain/timeline.js';
import type { CustomHeader } from './custom-headers.js';

/**
 * Outbound webhooks (issue 13): the shapes every part shares. Storage (src/storage/webhook-*.ts),
 * the dispatcher (src/webhooks/dispatcher.ts), the admin API and the CLI all speak these.
 */

/** `message.<type>` for every timeline event type, `alert.<kind>` (issue 29), and `webhook.test`. */
export const WEBHOOK_EVENT_TYPES = [
  ...TIMELINE_EVENT_TYPES.map((t) => `message.${t}` as const),
  ...ALERT_EVENT_TYPES,
  'webhook.test',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Whether a name is one of WEBHOOK_EVENT_TYPES: the one check the config file, the API, the CLI and storage use. */
export const isWebhookEventType = (s: string): s is WebhookEventType => (WEBHOOK_EVENT_TYPES as readonly string[]).includes(s);

/** An endpoint's subscription: every event (`*`), or the listed types. */
export type WebhookEventFilter = '*' | readonly WebhookEventType[];

export interface WebhookEndpoint {
  org_id: string;
  id: string;
  url: string;
  description: string | null;
  events: WebhookEventFilter;
  enabled: boolean;
  /** Why it was disabled (410 Gone, failing for days, an operator); null while enabled. */
  disabled_reason: string | null;
  /** `whsec_<base64 of ≥ 24 random bytes>`. Never shown on reads: only at creation and rotation. */
  secret: string;
  /** The secret before the last rotation: it signs too until `previous_secret_expires_at`. */
  previous_secret: string | null;
  previous_secret_expires_at: number | null;
  /** The first failure since the last success; null while the endpoint is healthy. */
  failing_since: number | null;
  /** Custom request headers (issue 29); the values are secrets, never shown on a read. */
  headers: readonly CustomHeader[];
  created_at: number;
  updated_at: number;
}

/** Where a URL may point, and the webhooks' settings: parsed with the environment (src/config/env-sections.ts). */
export type { WebhookSettings, WebhookUrlPolicy } from '../config/env-sections.js';

/** What one HTTP attempt came to. `status` null: no answer (connect error, timeout, refused address). */
export interface PostResult {
  status: number | null;
  durationMs: number;
  /** The first 1 KB of the answer's body (UTF-8, lossy). */
  body: string | null;
  error: string | null;
}

/** The one pooled HTTP client the webhooks use (src/webhooks/http-post.ts); tests may pass their own. */
export interface WebhookHttp {
  post(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<PostResult>;
  close(): Promise<void>;
}

/** One attempt as the log shows it. */
export interface WebhookAttemptView {
  attempt: number;
  at: number;
  status: number | null;
  duration_ms: number;
  response_body: string | null;
  error: string | null;
  /** The request's headers as sent, custom values masked; null when not logged (before 0023, or nothing sent). */
  request_headers: Record<string, string> | null;
}

export type WebhookDeliveryState = 'pending' | 'succeeded' | 'failed';

/** One delivery as the log shows it (the admin API renders times as ISO 8601). */
export interface WebhookDeliveryView {
  /** `whd_<n>` */
  id: string;
  endpoint_id: string;
  event_type: string;
  message_id: string | null;
  /** The `webhook-id` header: the same on every attempt and replay. */
  webhook_id: string;
  state: WebhookDeliveryState;
  attempts: number;
  next_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  /** The JSON body, fixed at the first attempt and sent on every one; null before it. */
  request_body: string | null;
  log: WebhookAttemptView[];
}
