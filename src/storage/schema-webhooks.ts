import type { Generated } from 'kysely';

// The tables of outbound webhooks (issue 13); schema.ts lists them in Database.

/** Outbound webhooks (migration 0006). `events`: `*` or `,message.sent,message.delivered,`. */
export interface WebhookEndpointsTable {
  org_id: string;
  id: string;
  url: string;
  description: string | null;
  events: string;
  enabled: number;
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: number | null;
  failing_since: number | null;
  created_at: number;
  updated_at: number;
  /** Custom request headers, a JSON array of {name, value} (migration 0023); values are secrets. */
  headers: Generated<string>;
}

/** The outbox: one row per (endpoint, event); `state` pending | succeeded | failed. */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  org_id: string;
  endpoint_id: string;
  event_id: number | null;
  message_id: string | null;
  event_type: string;
  message_status: string | null;
  sequence: number | null;
  /** The JSON body, fixed at the first attempt so every retry and replay sends the same bytes. */
  payload: string | null;
  state: string;
  attempts: Generated<number>;
  next_attempt_at: number | null;
  lease_until: number | null;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

/** The delivery log: one row per HTTP attempt. */
export interface WebhookAttemptsTable {
  delivery_id: number;
  attempt: number;
  at: number;
  status: number | null;
  duration_ms: number;
  /** The first 1 KB of the answer's body. */
  response_body: string | null;
  error: string | null;
  /** The request's headers as a JSON object, custom values masked (0023); null before it, or nothing sent. */
  request_headers: string | null;
}
