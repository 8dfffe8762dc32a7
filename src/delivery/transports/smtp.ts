import nodemailer from 'nodemailer';
import type { SmtpSettings } from '../../domain/types.js';
import { mailOptions } from '../compose.js';
import { DeliveryError, type FailureKind, type Transport, type TransportFactory } from '../transport.js';

/** Replies that mean "this mailbox does not exist" (RFC 3463 5.1.x, and the common wordings). */
const MAILBOX_UNKNOWN = /\b5\.1\.[0-36]\b|user not local|user unknown|unknown user|no such (user|mailbox|recipient)|does not exist|mailbox (unavailable|not found)|unknown recipient|invalid recipient/i;

/**
 * A TLS handshake that failed on the relay's certificate or on the protocol itself: expired,
 * self-signed or unverifiable certificates, a name the certificate does not cover, `secure`
 * against a plain port ("wrong version number"), no protocol in common. Node reports them with
 * OpenSSL's wording; nodemailer keeps Node's code as `originalCode`. Retrying changes none of
 * them, while a refused connection, a timeout or a failed DNS lookup may pass on its own.
 */
const TLS_FAILURE_CODE = /^(?:CERT_|ERR_TLS_CERT|ERR_SSL_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_(?:VERIFY|GET_ISSUER|DECRYPT)|HOSTNAME_MISMATCH$)/;
const TLS_FAILURE_TEXT = /certificate|self[- ]signed|unable to verify|unable to get (?:local )?issuer|does not match certificate|wrong version number|SSL routines|ssl3_get_record|(?:tlsv1|sslv3) alert|handshake failure|unsupported protocol|no protocols available/i;

interface SmtpFailure {
  code?: string;
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
function isTlsFailure(err: SmtpFailure): boolean {
  return TLS_FAILURE_CODE.test(err.originalCode ?? '') || TLS_FAILURE_TEXT.test(err.message);
}

export function isMailboxUnknown(status: number | undefined, text: string): boolean {
  return status !== undefined && status >= 500 && status < 600 && MAILBOX_UNKNOWN.test(text);
}

/**
 * Pooled connections per service. TCP_NODELAY matters (DESIGN.md: ~110 → ~900 msg/s on
 * loopback); nodemailer 10 sets it on every socket itself, so no socket hook is needed here,
 * and test/delivery/smtp-throughput.test.ts guards the figure.
 */
export const smtpTransport: TransportFactory = (service): Transport => {
  const smtp = service.settings.smtp as SmtpSettings | undefined;
  if (smtp === undefined) {
    return {
      send: async () => { throw new DeliveryError('service', `service ${service.id} has no smtp settings`); },
      close: async () => undefined,
    };
  }
  const transporter = nodemailer.createTransport({
    pool: true,
    maxConnections: 5,
    maxMessages: 1000,
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure,
    ...(smtp.user !== '' ? { auth: { user: smtp.user, pass: smtp.pass } } : {}),
    ...(smtp.dkim !== null ? { dkim: { domainName: smtp.dkim.domain_name, keySelector: smtp.dkim.key_selector, privateKey: smtp.dkim.private_key } } : {}),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 60_000,
  });
  return {
    async send(mail) {
      try {
        const info = await transporter.sendMail(mailOptions(mail));
        const rejected = ((info.rejected ?? []) as Array<string | { address: string }>).map((r) => (typeof r === 'string' ? r : r.address));
        // Recipients refused one by one while the others were accepted: those whose reply says
        // the mailbox does not exist are bounces, like a whole-message bounce.
        const errors = ((info as { rejectedErrors?: SmtpFailure[] }).rejectedErrors ?? []) as Array<SmtpFailure & { recipient?: string }>;
        const bounced = errors.filter((e) => e.recipient !== undefined && isMailboxUnknown(e.responseCode, `${e.response ?? ''}`)).map((e) => e.recipient as string);
        return { response: String(info.response ?? ''), ...(rejected.length > 0 ? { rejected } : {}), ...(bounced.length > 0 ? { bounced } : {}) };
      } catch (error) {
        const err = error as SmtpFailure & { rejectedErrors?: Array<SmtpFailure & { recipient?: string }> };
        // Every recipient refused: nodemailer reports the last reply; each refusal is kept apart.
        const perRecipient = err.rejectedErrors ?? [];
        if (perRecipient.length > 0 && perRecipient.every((e) => isMailboxUnknown(e.responseCode, `${e.response ?? ''}`))) {
          throw new DeliveryError('mailbox', err.response ?? err.message, perRecipient.map((e) => String(e.recipient ?? '')).filter(Boolean));
        }
        // OpenSSL's wording alone ("…:SSL routines:ssl3_get_record:wrong version number:…") does
        // not tell an operator which setting to look at.
        const reason = err.response ?? (isTlsFailure(err) ? `TLS with ${smtp.host}:${smtp.port} (secure: ${smtp.secure}) failed: ${err.message.trim()}` : err.message);
        throw new DeliveryError(classifySmtpError(err), reason, (err.rejected ?? []).map(String));
      }
    },
    async close() {
      transporter.close();
    },
  };
};
