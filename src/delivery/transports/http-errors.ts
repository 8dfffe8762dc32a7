import { canonicalAddress } from '../../domain/addresses.js';
import { DeliveryError, ServiceTestError, type Refusal, type ServiceTestReason } from '../transport.js';
import { ProviderConnectionError, type ProviderHttp, type ProviderRequest, type ProviderResponse } from './http-client.js';

/**
 * What the provider transports share to turn an HTTP answer into the worker's outcome
 * (DeliveryError kinds, transport.ts) and a service test's reason. Each provider's own table
 * lives in its file; these are the words they are written with.
 */

type Headers = Record<string, string | string[] | undefined>;

/** Retry-After and the like are clamped to [1 s, 1 h]: a zero would spin, a day would hide a fault. */
export const MIN_WAIT_MS = 1_000;
export const MAX_WAIT_MS = 60 * 60_000;

export function header(headers: Headers, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  const one = Array.isArray(v) ? v[0] : v;
  return one === undefined || one.trim() === '' ? undefined : one.trim();
}

const clamp = (ms: number, max: number) => Math.min(Math.max(Math.ceil(ms), MIN_WAIT_MS), max);

/**
 * `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date. Undefined when absent or
 * unreadable (the retry schedule applies then). `max`: a longer ceiling where the provider's
 * wait is known to be long (Resend's daily quota).
 */
export function retryAfterMs(headers: Headers, now: number, max = MAX_WAIT_MS, name = 'retry-after'): number | undefined {
  const v = header(headers, name);
  if (v === undefined) return undefined;
  if (/^\d+(?:\.\d+)?$/.test(v)) return clamp(Number(v) * 1000, max);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : clamp(at - now, max);
}

/** A reset given as Unix epoch seconds (SendGrid's X-RateLimit-Reset). */
export function resetAtMs(headers: Headers, name: string, now: number, max = MAX_WAIT_MS): number | undefined {
  const v = header(headers, name);
  if (v === undefined || !/^\d+$/.test(v)) return undefined;
  return clamp(Number(v) * 1000 - now, max);
}

/** The answer's JSON object, or undefined when it is not one (an HTML page, `Forbidden`, nothing). */
export function jsonObject(body: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(body);
    return isRecord(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * `HTTP <status> <the first 200 characters>` with whitespace folded: a JSON message when the
 * body has one (`message`, `Message`, SendGrid's `errors[].message`), the raw text otherwise
 * (nginx's HTML 413, Mailgun's plain `Forbidden`).
 */
export function describe(status: number, body: string): string {
  const json = jsonObject(body);
  let text: string | undefined;
  if (json !== undefined) {
    const errors = json.errors;
    if (Array.isArray(errors)) {
      text =
        errors
          .map((e: unknown) => (typeof e === 'object' && e !== null ? str(Reflect.get(e, 'message')) : undefined))
          .filter((m) => m !== undefined)
          .join('; ') || undefined;
    }
    text ??= str(json.message) ?? str(json.Message);
  }
  text ??= body;
  const folded = text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200);
  return folded === '' ? `HTTP ${status}` : `HTTP ${status} ${folded}`;
}

// One builder per outcome, so each provider's table reads as the table it is.

/** 429 and its kin: deferred, not sooner than the provider asked, and the service's pacing slows. */
export const throttled = (message: string, retryAfter?: number) =>
  new DeliveryError('temporary', message, [], [], {
    throttled: true,
    ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
  });

/** 5xx, maintenance, a concurrent request: deferred on the retry schedule. */
export const temporary = (message: string, retryAfter?: number) =>
  new DeliveryError('temporary', message, [], [], retryAfter !== undefined ? { retryAfterMs: retryAfter } : {});

/** The service's own problem (credentials, sender, account): held_service_error until it changes. */
export const service = (message: string) => new DeliveryError('service', message);

/** Refused for good: failed, the provider's message on the timeline. */
export const permanent = (message: string) => new DeliveryError('permanent', message);

/**
 * Some recipients refused by the provider as hard-bounced or complained (Postmark 406): those
 * bounce and are suppressed, each named; the others of the request are owed the message and go
 * again (deferred). Never a `mailbox` error without names: the worker would then suppress every
 * To address (outcomes.ts), so an unparsed list fails the message without suppressing anyone.
 */
export function mailbox(message: string, refusedAddresses: readonly string[], allRecipients: readonly string[]): DeliveryError {
  // canonicalAddress: a provider may name `zoë@exämple.com` by the other form of its domain.
  const refusedSet = new Set(refusedAddresses.map(canonicalAddress).filter((a) => a !== ''));
  const all = [...new Set(allRecipients.map(canonicalAddress))];
  const named = all.filter((a) => refusedSet.has(a));
  if (named.length === 0) return permanent(message);
  const refused: Refusal[] = all.map((address) =>
    refusedSet.has(address)
      ? { address, kind: 'mailbox', reason: message.slice(0, 500) }
      : {
          address,
          kind: 'temporary',
          reason: `not sent: the provider refused the whole request for other recipients (${message.slice(0, 400)})`,
        },
  );
  const kind = named.length === all.length ? 'mailbox' : 'temporary';
  return new DeliveryError(kind, message, kind === 'mailbox' ? named : all, refused);
}

/**
 * Some recipients refused as invalid addresses (Resend's validation error naming `to`): those
 * fail without suppression (a malformed address, not a mailbox known not to exist); the others
 * are deferred. Unnamed: the whole message fails.
 */
export function invalidRecipients(message: string, invalid: readonly string[], allRecipients: readonly string[]): DeliveryError {
  const bad = new Set(invalid.map(canonicalAddress));
  const all = [...new Set(allRecipients.map(canonicalAddress))];
  if (!all.some((a) => bad.has(a)) || all.every((a) => bad.has(a))) return permanent(message);
  const refused: Refusal[] = all.map((address) =>
    bad.has(address)
      ? { address, kind: 'permanent', reason: message.slice(0, 500) }
      : {
          address,
          kind: 'temporary',
          reason: `not sent: the provider refused the whole request for other recipients (${message.slice(0, 400)})`,
        },
  );
  return new DeliveryError('temporary', message, all, refused);
}

/**
 * A service test's reason for a failed check: a connection error (http-client.ts) carries its
 * own; an HTTP status: 401/403 → auth, anything else → other. `unverifiedSender` is the
 * provider's own verdict (Postmark 400/401 codes, SendGrid's from field, Resend's domain).
 */
export function verifyFailure(failure: unknown, message?: string, unverifiedSender = false): ServiceTestError {
  if (failure instanceof ServiceTestError) return failure;
  if (failure instanceof ProviderConnectionError) return new ServiceTestError(failure.reason, failure.message);
  if (typeof failure === 'number') {
    const reason: ServiceTestReason = unverifiedSender
      ? 'unverified_sender'
      : failure === 401 || failure === 403
        ? 'auth'
        : 'other';
    return new ServiceTestError(reason, message ?? `HTTP ${failure}`, failure >= 500 || failure === 429);
  }
  const text = failure instanceof Error ? failure.message : String(failure);
  return new ServiceTestError(unverifiedSender ? 'unverified_sender' : 'other', message ?? text);
}

/** A service test waits 10 s at most for its one request: the admin's POST …/test is waiting on it. */
export const VERIFY_TIMEOUT_MS = 10_000;

/**
 * The service test's one read-only request (Postmark, SendGrid, Resend, Mailgun): its answer,
 * whatever the status, or a ServiceTestError when none came (connect, timeout, tls).
 * `timeoutMs`: shorter only where a test shortens the client's own deadline.
 */
export async function verifyRequest(
  http: ProviderHttp,
  req: Omit<ProviderRequest, 'timeoutMs'>,
  timeoutMs = VERIFY_TIMEOUT_MS,
): Promise<ProviderResponse> {
  try {
    return await http.request({ ...req, timeoutMs });
  } catch (error) {
    throw verifyFailure(error);
  }
}
