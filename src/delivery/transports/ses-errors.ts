import { isTlsFailure } from '../classify.js';
import type { FailureKind, ServiceTestReason } from '../transport.js';

/**
 * How an SES v2 answer or an SDK failure is treated (the table in ses.ts's header), kept apart
 * from the client so the rules can be read and tested without a network.
 */

/** What the AWS SDK throws, read field by field (name = the error code, `$metadata.httpStatusCode`). */
export interface SesFailure {
  name: string;
  message: string;
  /** The HTTP status of an answer; undefined when no answer came (connection, timeout, credentials). */
  status: number | undefined;
  /** Node's code on a network failure (ECONNREFUSED, ENOTFOUND, …). */
  code: string | undefined;
}

export function sesFailureOf(error: unknown): SesFailure {
  if (typeof error !== 'object' || error === null)
    return { name: 'Error', message: String(error), status: undefined, code: undefined };
  const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
  const metadata: unknown = Reflect.get(error, '$metadata');
  const status = typeof metadata === 'object' && metadata !== null ? Reflect.get(metadata, 'httpStatusCode') : undefined;
  return {
    name: text(Reflect.get(error, 'name')) ?? 'Error',
    message: text(Reflect.get(error, 'message')) ?? String(error),
    status: typeof status === 'number' ? status : undefined,
    code: text(Reflect.get(error, 'code')),
  };
}

/** @smithy/core's THROTTLING_ERROR_CODES that SES answers (TooManyRequestsException is SES's 429). */
const THROTTLING = new Set([
  'TooManyRequestsException',
  'ThrottlingException',
  'Throttling',
  'LimitExceededException',
  'RequestLimitExceeded',
]);

/** The key or its signature is refused, or the credential chain found none: the service's settings. */
const AUTH = new Set([
  'AccessDeniedException',
  'AccessDenied',
  'UnrecognizedClientException',
  'InvalidClientTokenId',
  'SignatureDoesNotMatch',
  'IncompleteSignature',
  'MissingAuthenticationToken',
  'ExpiredToken',
  'ExpiredTokenException',
  'InvalidAccessKeyId',
  'CredentialsProviderError',
]);

/** Account state or settings the operator must change: waiting does not help. */
const HELD = new Set([
  'MailFromDomainNotVerifiedException',
  'AccountSuspendedException',
  'SendingPausedException',
  'NotFoundException',
]);

/** SES's MessageRejected wording for an identity that failed verification (From, or a sandbox recipient). */
const UNVERIFIED = /not verified|failed the check/i;

/** ENOTFOUND/ENODATA for the endpoint's own name is a setting (a mistyped endpoint), as for an SMTP relay host. */
const UNRESOLVABLE = new Set(['ENOTFOUND', 'ENODATA']);

export interface SesClassification {
  kind: FailureKind;
  throttled: boolean;
  /** MessageRejected for an unverified identity (the service test's `unverified_sender`). */
  unverified: boolean;
}

export function classifySesError(f: SesFailure): SesClassification {
  const is = (kind: FailureKind, extra: Partial<SesClassification> = {}): SesClassification => ({
    kind,
    throttled: false,
    unverified: false,
    ...extra,
  });
  if (THROTTLING.has(f.name) || f.status === 429) return is('temporary', { throttled: true });
  if (AUTH.has(f.name)) return is('service');
  if (f.name === 'MessageRejected' && UNVERIFIED.test(f.message)) return is('service', { unverified: true });
  if (HELD.has(f.name)) return is('service');
  // The SDK corrects its clock offset from this answer, so the next attempt is signed in time.
  if (f.name === 'RequestExpired' || f.name === 'RequestTimeTooSkewed') return is('temporary');
  if (f.status !== undefined && f.status >= 500) return is('temporary');
  // An AWS front end refusing the request under a name not listed above is still a key problem.
  if (f.status === 401 || f.status === 403) return is('service');
  if (f.status !== undefined && f.status >= 400) return is('permanent');
  // No answer: the endpoint's name does not exist, its certificate is refused, or the network failed.
  if (f.code !== undefined && UNRESOLVABLE.has(f.code)) return is('service');
  if (isTlsFailure({ message: f.message, ...(f.code !== undefined ? { originalCode: f.code } : {}) })) return is('service');
  return is('temporary');
}

/** "ses 400 MessageRejected: Email address is not verified…", or the network error's own words. */
export function describeSesFailure(f: SesFailure): string {
  const head = f.status !== undefined ? `ses ${f.status} ${f.name}` : `ses ${f.code ?? f.name}`;
  return `${head}: ${f.message}`.slice(0, 500);
}

/** The service test's reason for a failed GetAccount (see Transport.verify). */
export function sesTestReason(f: SesFailure): ServiceTestReason {
  if (AUTH.has(f.name) || f.status === 401 || f.status === 403) return 'auth';
  if (f.status !== undefined) return 'other';
  if (isTlsFailure({ message: f.message, ...(f.code !== undefined ? { originalCode: f.code } : {}) })) return 'tls';
  // @smithy/node-http-handler names ECONNRESET and EPIPE TimeoutError too: the code says which.
  if (f.code === 'ETIMEDOUT' || (f.name === 'TimeoutError' && f.code === undefined)) return 'timeout';
  if (f.code !== undefined) return 'connect';
  return 'other';
}
