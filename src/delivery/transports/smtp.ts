import nodemailer from 'nodemailer';
import type { SmtpSettings } from '../../domain/types.js';
import { mailOptions } from '../compose.js';
import { DeliveryError, type FailureKind, type Refusal, type RefusalKind, type Transport, type TransportFactory } from '../transport.js';

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
function isTlsFailure(err: SmtpFailure): boolean {
  return TLS_FAILURE_CODE.test(err.originalCode ?? '') || TLS_FAILURE_TEXT.test(err.message);
}

export function isMailboxUnknown(status: number | undefined, text: string): boolean {
  return status !== undefined && status >= 500 && status < 600 && MAILBOX_UNKNOWN.test(text);
}

/** A refusal of one recipient, as nodemailer reports it in `rejectedErrors`. */
type RecipientFailure = SmtpFailure & { recipient?: string };

/**
 * Each refused recipient and how: a recipient refused on its own is never the service's fault
 * as a whole (the relay took others), so a 530-like reply to one RCPT counts as permanent.
 */
export function refusalsOf(errors: readonly RecipientFailure[]): Refusal[] {
  return errors.filter((e) => e.recipient !== undefined && e.recipient !== '').map((e) => {
    const kind = classifySmtpError(e);
    return { address: String(e.recipient).toLowerCase(), kind: kind === 'service' ? 'permanent' : kind, reason: (e.response ?? e.message).slice(0, 500) };
  });
}

/**
 * A failed lookup of the relay's own name that an answer made final: the name does not exist
 * (ENOTFOUND, as for a typo like smtp.gmail.comm) or has no address (ENODATA). EAI_AGAIN is
 * left out on purpose: the resolver gave no answer at all (no network yet, a DNS server down),
 * which says nothing about the setting and passes on its own, so it is retried like a timeout.
 */
function isUnresolvableHost(err: SmtpFailure, host: string): boolean {
  const code = err.originalCode ?? err.code ?? '';
  return (code === 'ENOTFOUND' || code === 'ENODATA') && (err.hostname === undefined || err.hostname === host);
}

export interface SmtpTransportOptions {
  /**
   * The pause before the one quick retry of a relay host that did not resolve: a resolver may
   * answer NXDOMAIN for a moment while a record changes. Failing again, the service is held.
   */
  dnsRetryMs: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => { setTimeout(resolve, ms).unref(); });

/**
 * Pooled connections per service. TCP_NODELAY matters (DESIGN.md: ~110 → ~900 msg/s on
 * loopback); nodemailer 10 sets it on every socket itself, so no socket hook is needed here,
 * and test/delivery/smtp-throughput.test.ts guards the figure.
 */
export const smtpTransport: TransportFactory = (service, context) => createSmtpTransport({ dnsRetryMs: 2_000 })(service, context);

export const createSmtpTransport = (options: SmtpTransportOptions): TransportFactory => (service): Transport => {
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
  const attempt = async (mail: Parameters<Transport['send']>[0]) => {
    try {
      return await transporter.sendMail(mailOptions(mail));
    } catch (error) {
      if (!isUnresolvableHost(error as SmtpFailure, smtp.host)) throw error;
      await sleep(options.dnsRetryMs);
      return transporter.sendMail(mailOptions(mail));
    }
  };
  return {
    async send(mail) {
      try {
        const info = await attempt(mail);
        // Recipients refused one by one while the others were accepted: each with its reply.
        const refused = refusalsOf((info as { rejectedErrors?: RecipientFailure[] }).rejectedErrors ?? []);
        return { response: String(info.response ?? ''), ...(refused.length > 0 ? { refused } : {}) };
      } catch (error) {
        const err = error as SmtpFailure & { rejectedErrors?: RecipientFailure[] };
        if (isUnresolvableHost(err, smtp.host)) {
          throw new DeliveryError('service', `the relay host ${smtp.host} does not resolve (${err.originalCode ?? err.code}, twice): check the service's smtp.host`);
        }
        // Every recipient refused, each on its own: nodemailer reports the first reply as the
        // error's. One kind for all is the message's outcome; kinds that differ are settled per
        // recipient by the worker (the error's own kind is then only a fallback).
        const refused = refusalsOf(err.rejectedErrors ?? []);
        if (refused.length > 0) {
          const kinds = new Set<RefusalKind>(refused.map((r) => r.kind));
          const reason = err.response ?? err.message;
          const addresses = refused.map((r) => r.address);
          const kind = classifySmtpError(err);
          // A 530-like reply to every RCPT is the service's problem, as it is for one recipient alone.
          if (kinds.size === 1 && kind !== 'service') throw new DeliveryError(refused[0]!.kind, reason, addresses, refused);
          throw new DeliveryError(kinds.size === 1 ? kind : 'temporary', reason, addresses, refused);
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
