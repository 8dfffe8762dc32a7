// What the queue (queue.ts, queue-postgres.ts) hands the delivery code, and what it takes back.
import type { KeyMode } from '../domain/types.js';
import type { RecipientState } from './recipient-states.js';

/** A message the worker has claimed: everything needed to send it. */
export interface ClaimedMessage {
  id: string;
  org_id: string;
  service_id: string;
  content: string;
  header_message_id: string;
  attachments: string | null;
  attempts: number;
  credit_taken: boolean;
  created_at: number;
  /** A test message is captured, never handed to a relay (issue 27). */
  mode: KeyMode;
  /** Some recipient is a simulator address (src/testmode/simulator.ts). */
  simulated: boolean;
  /** The lease this claim holds; every outcome applies only while it still holds it. */
  lease_until: number;
}

export interface ReapResult {
  /** Messages given back to the queue. */
  requeued: number;
  /** Messages that had used up their attempts or their time: `failed`. */
  failed: Array<{ id: string; service_id: string }>;
}

/** A recipient state the worker writes (never `pending`, which only the send path writes). */
export type SettledState = Exclude<RecipientState, 'pending'>;

/**
 * What one attempt did to a message whose recipients parted ways (src/delivery/recipients.ts
 * plans it): each recipient's new state, the events, and where the message goes next.
 */
export interface RecipientOutcome {
  recipients: ReadonlyArray<{ address: string; state: SettledState; reason: string | null }>;
  events: ReadonlyArray<{ type: string; detail: Record<string, unknown> }>;
  /** `queued`: tried again at `nextAttemptAt` for the recipients still `deferred`. */
  next:
    | { status: 'queued'; nextAttemptAt: number; lastError: string }
    | { status: 'sent' | 'bounced' | 'failed' | 'held_service_error' | 'discarded'; lastError: string | null };
  /** Some recipient was accepted in this attempt: the message has been sent (to them) now. */
  accepted: boolean;
  /** This hand-off's provider id (someone accepted): the message's now, whose later events are this hand-off's. */
  providerMessageId?: string;
}

/** Messages still bound to a service (queueRepo.boundToService): a delete waits for none. */
export interface BoundMessages {
  queued: number;
  sending: number;
  /** Held for credits or on the service's error. */
  held: number;
}
