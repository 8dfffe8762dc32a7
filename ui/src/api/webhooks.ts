/**
 * Outbound webhook endpoints (src/admin/routes/webhooks.ts) and their delivery log
 * (webhook-deliveries.ts). The signing secret comes back only from create and rotate.
 */
import { api, orgPath } from './client';
import type { Page } from './types';

/** The message event types an endpoint can subscribe to (src/webhooks/types.ts), and the test event. */
export const WEBHOOK_EVENT_TYPES = [
  'message.queued', 'message.held', 'message.released', 'message.sending', 'message.sent', 'message.deferred',
  'message.delivered', 'message.bounced', 'message.complained', 'message.failed', 'message.discarded',
  'message.held_service_error', 'webhook.test',
] as const;

export const DELIVERY_STATES = ['pending', 'succeeded', 'failed'] as const;

export interface WebhookEndpoint {
  id: string;
  url: string;
  description: string | null;
  /** `["*"]`: every event type. */
  events: string[];
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: string | null;
  secret_hint: string;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookSettings {
  url: string;
  events: string[];
  enabled?: boolean;
  description?: string | null;
}

export interface WebhookAttempt {
  attempt: number;
  at: string;
  status: number | null;
  duration_ms: number;
  response_body: string | null;
  error: string | null;
}

export interface WebhookDelivery {
  id: string;
  endpoint_id: string;
  event_type: string;
  message_id: string | null;
  webhook_id: string;
  state: string;
  attempts: number;
  next_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  log: WebhookAttempt[];
}

export interface Queued {
  queued: number;
  endpoint_enabled: boolean;
  message?: string;
}

export interface TestResult {
  ok: boolean;
  status: number | null;
  duration_ms: number;
  error: string | null;
  delivery_id: string;
}

export interface DeliveryQuery {
  event_type?: string;
  state?: string;
  message_id?: string;
  cursor?: string;
  limit?: number;
}

const base = (org: string, ...rest: string[]) => orgPath(org, 'webhooks', ...rest);

export const listWebhooks = (org: string) => api.get<{ items: WebhookEndpoint[] }>(base(org));
export const getWebhook = (org: string, id: string) => api.get<WebhookEndpoint>(base(org, id));
export const createWebhook = (org: string, body: WebhookSettings) => api.post<WebhookEndpoint & { secret: string }>(base(org), body);
export const patchWebhook = (org: string, id: string, body: Partial<WebhookSettings>) => api.patch<WebhookEndpoint>(base(org, id), body);
export const deleteWebhook = (org: string, id: string) => api.delete(base(org, id));
export const setWebhookEnabled = (org: string, id: string, enabled: boolean) => api.post<WebhookEndpoint>(base(org, id, enabled ? 'enable' : 'disable'));
export const rotateWebhookSecret = (org: string, id: string) =>
  api.post<{ secret: string; previous_secret_expires_at: string | null }>(base(org, id, 'rotate-secret'));
export const testWebhook = (org: string, id: string) => api.post<TestResult>(base(org, id, 'test'));
export const listDeliveries = (org: string, id: string, q: DeliveryQuery) => api.get<Page<WebhookDelivery>>(base(org, id, 'deliveries'), { ...q });
export const replayDelivery = (org: string, id: string, deliveryId: string) => api.post<Queued>(base(org, id, 'deliveries', deliveryId, 'replay'));
export const replayRange = (org: string, id: string, body: { since: string; until: string; only_failed: boolean }) =>
  api.post<Queued>(base(org, id, 'replay'), body);
