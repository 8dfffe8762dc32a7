import type { KeyMode, Service } from '../domain/types.js';
import type { RenderedEmail } from '../templates/render.js';

/** What leaves: the stored rendered email plus the identity every attempt reuses. */
export interface OutgoingEmail {
  messageId: string;
  /** RFC 5322 Message-ID, the same on every attempt so a duplicate delivery is recognisable. */
  headerMessageId: string;
  email: RenderedEmail;
  attachments: Array<{ filename: string; contentType: string | undefined; content: Buffer; contentId?: string }>;
  /**
   * A submitted message's bytes (SMTP submission, issue 28): relays and raw-MIME APIs send them
   * as they are (compose.ts); `email` is then only its summary (subject, From, recipients).
   */
  mime?: Buffer;
  /**
   * Headers of a submitted message that a JSON provider is given beside its fields
   * (transports/mime-to-json.ts): In-Reply-To, References, List-Unsubscribe, X-….
   */
  extraHeaders?: ReadonlyArray<{ name: string; value: string }>;
  /**
   * The addresses to hand the relay (SMTP: RCPT TO). Absent: every recipient of `email`. A
   * retry after a partial refusal names only the recipients still owed the message, while the
   * headers stay those of the first attempt.
   */
  envelopeTo?: string[];
  /**
   * Set on the sandbox path only (test-mode and simulator messages, transports/sandbox.ts), which
   * answers by attempt and age (softbounce@, delay@) and captures test-mode messages per org.
   * Relays and providers never see them.
   */
  attempt?: number;
  createdAt?: number;
  mode?: KeyMode;
  orgId?: string;
}

/** How the relay answered one recipient it refused (see FailureKind). */
export type RefusalKind = 'temporary' | 'mailbox' | 'permanent';

/** One recipient refused on its own (a reply to its RCPT, or LMTP's reply after DATA). */
export interface Refusal {
  address: string;
  kind: RefusalKind;
  reason: string;
  /** This recipient may be tried again this much later (the sandbox's softbounce@ and delay@), not sooner. */
  retryAfterMs?: number;
}

export interface DeliveryReceipt {
  /** The provider's own id or reply line, kept in the `sent` event. */
  response: string;
  /** Recipients the provider refused while accepting the message for the others. */
  refused?: Refusal[];
  /**
   * The provider's own id for the message, where it reports one reliably (an SMTP relay's 250
   * reply: transports/smtp-reply.ts; a provider API's answer): stored on the message, so the
   * provider's events after hand-off can be matched to it. The outbox reports none.
   */
  providerMessageId?: string;
}

/**
 * How a failed attempt is treated:
 * - `temporary`: 4xx reply, refused/timed-out connection, DNS → retry with backoff;
 * - `mailbox`: the mailbox does not exist (5xx on RCPT) → bounced, recipient suppressed;
 * - `permanent`: any other 5xx → failed;
 * - `service`: the service itself is broken (authentication, TLS, configuration) →
 *   held_service_error until an operator fixes the service.
 */
export type FailureKind = 'temporary' | 'mailbox' | 'permanent' | 'service';

/**
 * `refused`: when the relay refused every recipient, each on its own (nodemailer then fails the
 * whole send), how it refused each one; the worker settles them one by one when they differ.
 */
export class DeliveryError extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly recipients: string[] = [],
    readonly refused: Refusal[] = [],
    readonly options: DeliveryErrorOptions = {},
  ) {
    super(message);
    this.name = 'DeliveryError';
  }
}

/** What a provider's answer says beyond the kind (HTTP providers, issue 14). */
export interface DeliveryErrorOptions {
  /** The provider asked us to wait this long (Retry-After, a rate-limit reset): the retry is not sooner. */
  retryAfterMs?: number;
  /** Throttling (429, SES Throttling): the service's pacing slows down for a while as well. */
  throttled?: boolean;
}

/** Why a service test failed (POST …/services/{id}/test → 502 provider_error, details.reason). */
export type ServiceTestReason = 'auth' | 'tls' | 'connect' | 'timeout' | 'unverified_sender' | 'other';

export class ServiceTestError extends Error {
  /**
   * Whether the service failed for now (nothing answered, or it answered "try later": HTTP 5xx
   * or 429, SMTP 4xx) rather than answering no: the circuit breaker's synthetic probe (probe.ts)
   * reads it. Connection, timeout and TLS failures are transient unless said otherwise.
   */
  readonly transient: boolean;

  constructor(
    readonly reason: ServiceTestReason,
    message: string,
    transient?: boolean,
  ) {
    super(message);
    this.transient = transient ?? (reason === 'connect' || reason === 'timeout' || reason === 'tls');
    this.name = 'ServiceTestError';
  }
}

/** One outbound service. Adding a provider is one file that implements this and registers it. */
export interface Transport {
  send(mail: OutgoingEmail): Promise<DeliveryReceipt>;
  /**
   * Checks the credentials without sending mail (SMTP: connect, STARTTLS/TLS, AUTH, QUIT; an
   * HTTP provider: one documented read-only authenticated call). Throws ServiceTestError.
   * Called in the main process on a transport built for the test and closed after it.
   */
  verify?(): Promise<void>;
  close(): Promise<void>;
}

export interface TransportContext {
  dataDir: string;
}

export type TransportFactory = (service: Service, context: TransportContext) => Transport;

/**
 * What a service gets when its transport cannot even be built (its settings are of the wrong
 * shape): every send fails as the service's problem, so its messages are held until an
 * operator fixes it, and no other service is affected.
 */
export function brokenTransport(service: Pick<Service, 'org_id' | 'id'>, error: unknown): Transport {
  const reason =
    `the transport of service ${service.org_id}/${service.id} cannot be built ` +
    `from its settings: ${error instanceof Error ? error.message : String(error)}`;
  return {
    send: async () => {
      throw new DeliveryError('service', reason);
    },
    close: async () => undefined,
  };
}
