import type { FailureKind, Refusal } from './transport.js';

/**
 * How the worker must treat an SMTP reply or error (FailureKind), for the whole message and for
 * each recipient the relay refused on its own. Kept apart from the SMTP transport so the rules
 * can be read, and tested, without nodemailer.
 */

/** Replies that mean "this mailbox does not exist" (RFC 3463 5.1.x, and the common wordings). */
const MAILBOX_UNKNOWN = new RegExp(
  [
    '\\b5\\.1\\.[0-36]\\b',
    'user not local|user unknown|unknown user|no such (user|mailbox|recipient)|does not exist',
    'mailbox (unavailable|not found)|unknown recipient|invalid recipient',
  ].join('|'),
  'i',
);

/**
 * A TLS handshake that failed on the relay's certificate or on the protocol itself: expired,
 * self-signed or unverifiable certificates, a name the certificate does not cover, `secure`
 * against a plain port ("wrong version number"), no protocol in common. Node reports them with
 * OpenSSL's wording; nodemailer keeps Node's code as `originalCode`. Retrying changes none of
 * them, while a refused connection, a timeout or a failed DNS lookup may pass on its own.
 */
const TLS_FAILURE_CODE = new RegExp(
  `^(?:${[
    'CERT_|ERR_TLS_CERT|ERR_SSL_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$',
    'UNABLE_TO_(?:VERIFY|GET_ISSUER|DECRYPT)|HOSTNAME_MISMATCH$',
  ].join('|')})`,
);
const TLS_FAILURE_TEXT = new RegExp(
  [
    'certificate|self[- ]signed|unable to verify|unable to get (?:local )?issuer|does not match certificate',
    'wrong version number|SSL routines|ssl3_get_record|(?:tlsv1|sslv3) alert|handshake failure',
    'unsupported protocol|no protocols available',
  ].join('|'),
  'i',
);

export interface SmtpFailure {
  code?: string;
  /** The DNS lookup's host, on a failed lookup. */
  hostname?: string;
  /** Node's own code beneath nodemailer's (nodemailer ≥ 9), e.g. CERT_HAS_EXPIRED. */
  originalCode?: string;
  responseCode?: number;
  response?: string;
  command?: string;
  message: string;
  rejected?: string[];
}

/**
 * Sorts a nodemailer error into how the worker must treat it (see FailureKind). Only a reply
 * to RCPT or DATA that says the mailbox does not exist is a bounce: a bare 550 is also what a
 * relay answers for "relaying denied" (5.7.1), and suppressing every recipient for a
 * misconfigured relay would be far worse than one failed message.
 */
export function classifySmtpError(err: SmtpFailure): FailureKind {
  const code = err.code ?? '';
  if (code === 'EAUTH' || code === 'ETLS' || code === 'ECONFIG' || code === 'ENOAUTH') return 'service';
  const status = err.responseCode;
  // Only without a reply: a relay's own "454 4.7.0 TLS not available" is a 4xx, and temporary.
  if (status === undefined && isTlsFailure(err)) return 'service';
  if (status !== undefined && status >= 500 && status < 600) {
    if (status === 530 || status === 534 || status === 535) return 'service';
    const command = (err.command ?? '').toUpperCase();
    const aboutMailbox = command.startsWith('RCPT') || command === 'DATA';
    return aboutMailbox && isMailboxUnknown(status, `${err.response ?? ''} ${err.message}`) ? 'mailbox' : 'permanent';
  }
  // 4xx replies, refused or dropped connections, timeouts and DNS failures pass; retry later.
  // (A plain connection to a TLS-only port is among them: the relay waits for a handshake that
  // never comes, and all the client sees is a greeting timeout.)
  return 'temporary';
}

/** See TLS_FAILURE_TEXT. Node's code when there is one; the wording otherwise (older nodemailer). */
export function isTlsFailure(err: SmtpFailure): boolean {
  return TLS_FAILURE_CODE.test(err.originalCode ?? '') || TLS_FAILURE_TEXT.test(err.message);
}

export function isMailboxUnknown(status: number | undefined, text: string): boolean {
  return status !== undefined && status >= 500 && status < 600 && MAILBOX_UNKNOWN.test(text);
}

/** A refusal of one recipient, as nodemailer reports it in `rejectedErrors`. */
export type RecipientFailure = SmtpFailure & { recipient?: string };

/**
 * Each refused recipient and how: a recipient refused on its own is never the service's fault
 * as a whole (the relay took others), so a 530-like reply to one RCPT counts as permanent.
 */
export function refusalsOf(errors: readonly RecipientFailure[]): Refusal[] {
  return errors
    .filter((e) => e.recipient !== undefined && e.recipient !== '')
    .map((e) => {
      const kind = classifySmtpError(e);
      return {
        address: String(e.recipient).toLowerCase(),
        kind: kind === 'service' ? 'permanent' : kind,
        reason: (e.response ?? e.message).slice(0, 500),
      };
    });
}

/**
 * A failed lookup of the relay's own name that an answer made final: the name does not exist
 * (ENOTFOUND, as for a typo like smtp.gmail.comm) or has no address (ENODATA). EAI_AGAIN is
 * left out on purpose: the resolver gave no answer at all (no network yet, a DNS server down),
 * which says nothing about the setting and passes on its own, so it is retried like a timeout.
 */
export function isUnresolvableHost(err: SmtpFailure, host: string): boolean {
  const code = err.originalCode ?? err.code ?? '';
  return (code === 'ENOTFOUND' || code === 'ENODATA') && (err.hostname === undefined || err.hostname === host);
}

/** A failure as nodemailer reports it, with the refusals of single recipients it carries. */
export type ReportedFailure = RecipientFailure & { rejectedErrors: RecipientFailure[] };

/**
 * Reads what nodemailer throws (an Error with extra fields, set or not by the path that failed)
 * field by field, so a field of another type is absent rather than trusted; anything thrown
 * that is not an object is its own message.
 */
export function smtpFailureOf(error: unknown): ReportedFailure {
  if (typeof error !== 'object' || error === null) return { message: String(error), rejectedErrors: [] };
  const field = (name: string): unknown => Reflect.get(error, name);
  const text = (name: string): string | undefined => {
    const v = field(name);
    return typeof v === 'string' ? v : undefined;
  };
  const responseCode = field('responseCode');
  const rejected = field('rejected');
  const rejectedErrors = field('rejectedErrors');
  const message = text('message');
  return {
    code: text('code'),
    hostname: text('hostname'),
    originalCode: text('originalCode'),
    responseCode: typeof responseCode === 'number' ? responseCode : undefined,
    response: text('response'),
    command: text('command'),
    message: message ?? String(error),
    rejected: Array.isArray(rejected) ? rejected.map(String) : undefined,
    recipient: text('recipient'),
    rejectedErrors: Array.isArray(rejectedErrors) ? rejectedErrors.map(smtpFailureOf) : [],
  };
}
