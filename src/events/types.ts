import { WEBHOOK_SOURCES, type WebhookSource } from '../providers/index.js';

/**
 * What happens to a message after hand-off (issue 12), in one shape whatever told us: a
 * provider's webhook (SES through SNS, Postmark, SendGrid, Mailgun, Resend) or a report that
 * came back as mail to a VERP bounce address (RFC 3464 DSN, RFC 5965 ARF). Sources turn their
 * wire format into `ProviderEvent`s; `recordProviderEvents` (src/events/record.ts) is the one
 * place that matches, deduplicates, stores, moves the status, suppresses and counts them.
 */

/** The webhook sources a service's `events.source` may name: the providers with an `events` block (src/providers/). */
export { WEBHOOK_SOURCES, type WebhookSource };

/** Every source an event may come from (src/domain/event-sources.ts). */
import type { EventSource } from '../domain/event-sources.js';

export { EVENT_SOURCES, type EventSource } from '../domain/event-sources.js';

/** Outcomes after hand-off. `failed` covers a provider's reject/drop after it accepted the call. */
export type ProviderEventType = 'delivered' | 'bounced' | 'complained' | 'deferred' | 'failed';

export interface ProviderEvent {
  source: EventSource;
  /**
   * Deduplication key, unique per source: the provider's own event id, or where it has none a
   * SHA-256 digest of the event's canonical bytes (providers retry the same event).
   */
  eventKey: string;
  type: ProviderEventType;
  /** When it happened (ms since the epoch), as the provider says; the receipt time failing that. */
  at: number;
  /** The recipient it is about, lower-cased; null when the source does not say. */
  recipient: string | null;
  /** Bounces only: hard (the address does not exist / is permanently refused) or soft. */
  bounceType?: 'hard' | 'soft';
  /** Remote status code (e.g. "5.1.1" or "550") when known. */
  status?: string | null;
  /** Remote text / diagnostic (trimmed to 1,000 characters by record). */
  reason?: string | null;
  /** How to find our message, most specific first; record tries each it is given. */
  match: {
    /** Our message id (msg_…), from metadata the provider echoes or a VERP token. */
    messageId?: string;
    /** The provider's message id, as the transport reported it at hand-off. */
    providerMessageId?: string;
    /** Our RFC 5322 Message-ID header (with or without angle brackets). */
    headerMessageId?: string;
  };
  /** Provider-specific fields worth keeping on the timeline (small, JSON-safe). */
  extra?: Record<string, string | number | boolean | null>;
}

/** What became of one event. `rejected` is counted by the intake (failed verification). */
export type RecordOutcome = 'recorded' | 'duplicate' | 'unmatched';

/** Counted on /metrics as mailroom_provider_events_total{source, outcome}. */
export type IntakeOutcome = RecordOutcome | 'rejected';

/** A request as a webhook source needs it: verification is over the raw bytes. */
export interface IntakeRequest {
  /** Lower-cased header names. */
  headers: Readonly<Record<string, string | undefined>>;
  rawBody: Buffer;
  /** The full URL the provider posted to (SNS and Postmark-style checks may need it). */
  url: string;
}

/**
 * One webhook source: verify, then parse. Throws IntakeRejected (→ 401 unauthorized, nothing
 * recorded) when verification fails, IntakeMalformed (→ 400 invalid_body) for a verified body
 * it cannot read. `settings` is the service's `events` object as stored (secrets included).
 */
export interface WebhookSourceHandler {
  readonly source: WebhookSource;
  verifyAndParse(request: IntakeRequest, settings: Readonly<Record<string, unknown>>, now: number): Promise<WebhookIntake>;
}

export interface WebhookIntake {
  events: ProviderEvent[];
  /** Extra work the source needs done after verification (e.g. SNS SubscriptionConfirmation). */
  followUp?: () => Promise<void>;
}

export class IntakeRejected extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IntakeRejected';
  }
}

export class IntakeMalformed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IntakeMalformed';
  }
}

/** The seam for outbound webhooks (a later issue): every recorded event is handed to it. */
export interface EventNotifier {
  notify(event: {
    messageId: string;
    orgId: string;
    type: string;
    at: number;
    recipient: string | null;
    detail: Record<string, unknown>;
  }): void;
}
