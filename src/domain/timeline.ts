import type { MessageStatus } from './types.js';

/**
 * Every `type` a message's timeline (`GET /v1/messages/{id}` → `events`) can hold, in the order
 * a message usually meets them. The OpenAPI document lists exactly these; a writer that adds a
 * new one must add it here (the checks below and test/http/openapi-timeline.test.ts say so).
 */
export const TIMELINE_EVENT_TYPES = [
  'queued',
  'held',
  'released',
  'sending',
  'sent',
  'deferred',
  'delivered',
  'bounced',
  'complained',
  'failed',
  'discarded',
  'held_service_error',
] as const;
export type TimelineEventType = (typeof TIMELINE_EVENT_TYPES)[number];

/** What each type means and which fields it carries (OpenAPI description; the README's table says the same). */
export const TIMELINE_EVENT_MEANINGS: Readonly<Record<TimelineEventType, string>> = {
  queued:
    'accepted and waiting to be sent, or back in the queue: `details.reason` lease_expired (a worker died ' +
    'mid-send), worker_stopped, context_unavailable, service_updated (a held_service_error message retried)',
  held: 'accepted without credits (when_out_of_credits: hold); it waits for credits or an operator',
  released: 'a held message goes to the queue: `reason` credits_added, operator or credits_unlimited',
  sending: 'a worker claimed it: `details.attempt`',
  sent:
    "the relay or provider accepted it: `details.response` (its reply), `details.provider_message_id` (the provider's id for " +
    'this hand-off, when it reported one), `details.service_id` (the service that sent it) and, when its ' +
    'recipients were settled one by one (some refused, or a retry for those still owed it), ' +
    '`details.recipients` (the addresses accepted); response, provider_message_id and recipients are private-key reads only',
  deferred:
    'refused for now at hand-off and retried (`recipient`, `reason`, `details.retry_at`), or a ' +
    'provider reports a delay (`provider`, `recipient`, `reason`, `status`, `bounce_type` soft)',
  delivered:
    'the provider or a DSN reports delivery: `provider`, `recipient`, `reason` (the remote reply) and `status` when known',
  bounced:
    'refused for good, at hand-off (`recipient`, `reason`, `bounce_type`) or reported later ' +
    '(`provider`, `recipient`, `bounce_type`, `status`, `reason`); hard bounces suppress the recipient',
  complained:
    'the recipient reported it as spam (feedback loop or provider): `provider`, `recipient`, `reason`; suppresses the recipient',
  failed:
    'retries ran out, a permanent error, no recipient left, or the provider rejected ' +
    'or dropped it: `reason`, `recipient` when about one, `provider` when reported later',
  discarded: 'will not be sent: cancelled, expired, or every recipient suppressed: `reason`',
  held_service_error: "the service's credentials or settings are broken; retried when the service is changed: `reason`",
};

/** Compile-time: the queue writes an event named for every status it moves a message to. */
type Holds<T extends true> = T;
export type StatusesAreTimelineTypes = Holds<MessageStatus extends TimelineEventType ? true : false>;
