import nodemailer from 'nodemailer';
import { classifySmtpError, isTlsFailure, isUnresolvableHost, refusalsOf, smtpFailureOf } from '../classify.js';
import { mailOptions, type MailOptions } from '../compose.js';
import { trackingHeaders } from '../tracking-headers.js';
import { readSmtpSettings } from '../smtp-settings.js';
import { providerMessageIdOf } from './smtp-reply.js';
import { verifySmtp } from './smtp-verify.js';
import {
  DeliveryError,
  ServiceTestError,
  type DeliveryReceipt,
  type OutgoingEmail,
  type RefusalKind,
  type Transport,
  type TransportFactory,
} from '../transport.js';
import { verpAddress, verpSecret } from '../verp.js';

export interface SmtpTransportOptions {
  /**
   * The pause before the one quick retry of a relay host that did not resolve: a resolver may
   * answer NXDOMAIN for a moment while a record changes. Failing again, the service is held.
   */
  dnsRetryMs: number;
  /** The service test's bound on each step and on the whole (verify()); default VERIFY_TIMEOUT_MS. */
  verifyTimeoutMs?: number;
}

/** 15 s: a relay's greeting may be delayed on purpose (greet-pause, ~5 s), and an admin waits on this. */
export const VERIFY_TIMEOUT_MS = 15_000;

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref();
  });

/**
 * Pooled connections per service. TCP_NODELAY matters (README, Performance: ~110 → ~850–1,000
 * msg/s on loopback); nodemailer 10 sets it on every socket itself, so no socket hook is needed
 * here, and test/delivery/smtp-throughput.test.ts guards the figure.
 */
export const smtpTransport: TransportFactory = (service, context) => createSmtpTransport({ dnsRetryMs: 2_000 })(service, context);

export const createSmtpTransport =
  (options: SmtpTransportOptions): TransportFactory =>
  (service, context): Transport => {
    // The worker held a service whose settings fail this check before it got here (readService);
    // a factory that throws is held all the same (brokenTransport).
    const read = readSmtpSettings(service.settings);
    if (!read.ok) throw new Error(read.problem);
    const smtp = read.smtp;
    if (smtp === undefined) {
      return {
        send: async () => {
          throw new DeliveryError('service', `service ${service.id} has no smtp settings`);
        },
        verify: async () => {
          throw new ServiceTestError('other', `service ${service.id} has no smtp settings`);
        },
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
      ...(smtp.dkim !== null
        ? { dkim: { domainName: smtp.dkim.domain_name, keySelector: smtp.dkim.key_selector, privateKey: smtp.dkim.private_key } }
        : {}),
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 60_000,
    });
    const attempt = async (mail: MailOptions) => {
      try {
        return await transporter.sendMail(mail);
      } catch (error) {
        if (!isUnresolvableHost(smtpFailureOf(error), smtp.host)) throw error;
        await sleep(options.dnsRetryMs);
        return transporter.sendMail(mail);
      }
    };
    const optionsOf = (mail: OutgoingEmail): MailOptions => mailOptions(mail, trackingHeaders(service.settings, mail.messageId));
    const bounceDomain = typeof service.settings.bounce_domain === 'string' ? service.settings.bounce_domain : undefined;
    const secret = bounceDomain === undefined ? undefined : verpSecret(context.dataDir);
    // With an events source, the relay's id in its 250 is what that source's events name.
    const events = service.settings.events;
    const replyIds = {
      events: typeof events === 'object' && events !== null && 'source' in events && typeof events.source === 'string',
    };
    const transaction = async (mail: MailOptions): Promise<DeliveryReceipt> => {
      try {
        const info = await attempt(mail);
        // Recipients refused one by one while the others were accepted: each with its reply.
        const refused = info.rejectedErrors === undefined ? [] : refusalsOf(info.rejectedErrors.map(smtpFailureOf));
        const response = String(info.response ?? '');
        const providerMessageId = providerMessageIdOf(response, replyIds);
        return {
          response,
          ...(providerMessageId !== undefined ? { providerMessageId } : {}),
          ...(refused.length > 0 ? { refused } : {}),
        };
      } catch (error) {
        const err = smtpFailureOf(error);
        if (isUnresolvableHost(err, smtp.host)) {
          throw new DeliveryError(
            'service',
            `the relay host ${smtp.host} does not resolve ` +
              `(${err.originalCode ?? err.code}, twice): check the service's smtp.host`,
          );
        }
        // Every recipient refused, each on its own: nodemailer reports the first reply as the
        // error's. One kind for all is the message's outcome; kinds that differ are settled per
        // recipient by the worker (the error's own kind is then only a fallback).
        const refused = refusalsOf(err.rejectedErrors);
        if (refused.length > 0) {
          const kinds = new Set<RefusalKind>(refused.map((r) => r.kind));
          const reason = err.response ?? err.message;
          const addresses = refused.map((r) => r.address);
          const kind = classifySmtpError(err);
          // A 530-like reply to every RCPT is the service's problem, as it is for one recipient alone.
          const [shared] = kinds.size === 1 ? kinds : [];
          if (shared !== undefined && kind !== 'service') throw new DeliveryError(shared, reason, addresses, refused);
          throw new DeliveryError(kinds.size === 1 ? kind : 'temporary', reason, addresses, refused);
        }
        // OpenSSL's wording alone ("…:SSL routines:ssl3_get_record:wrong version number:…") does
        // not tell an operator which setting to look at.
        const reason =
          err.response ??
          (isTlsFailure(err)
            ? `TLS with ${smtp.host}:${smtp.port} (secure: ${smtp.secure}) failed: ${err.message.trim()}`
            : err.message);
        throw new DeliveryError(classifySmtpError(err), reason, (err.rejected ?? []).map(String));
      }
    };
    return {
      async send(mail) {
        if (bounceDomain === undefined || secret === undefined) return transaction(optionsOf(mail));
        return sendVerp(mail, optionsOf(mail), (to) => verpAddress(secret, bounceDomain, mail.messageId, to), transaction);
      },
      verify: () => verifySmtp(smtp, options.verifyTimeoutMs ?? VERIFY_TIMEOUT_MS),
      async close() {
        transporter.close();
      },
    };
  };

/**
 * VERP (src/delivery/verp.ts): one envelope sender per recipient, so a message to several goes
 * as one SMTP transaction each, over the pool's open connections (the price of knowing who
 * bounced, paid only by services with a bounce_domain; one recipient stays one transaction).
 * Outcomes are put together as one transaction's would be: the accepted ones sent, the others
 * refused each with its reply; every one refused → DeliveryError, of their kind when they share
 * it; a problem of the service itself (authentication, TLS) → that error.
 */
async function sendVerp(
  mail: OutgoingEmail,
  base: MailOptions,
  sender: (to: string) => string | undefined,
  transaction: (m: MailOptions) => Promise<DeliveryReceipt>,
): Promise<DeliveryReceipt> {
  const e = mail.email;
  const spelled = new Map([...e.to, ...e.cc, ...e.bcc].map((a) => [a.address.toLowerCase(), a.address]));
  const recipients = mail.envelopeTo ?? [...spelled.values()];
  const one = (to: string) => {
    const from = sender(to);
    return transaction(from === undefined ? base : { ...base, envelope: { from, to: [to] } });
  };
  const [only, ...others] = recipients;
  if (only !== undefined && others.length === 0) return one(only);
  // allSettled, each outcome paired with its recipient: a refusal is recorded against its address.
  const results = await Promise.all(
    recipients.map((to) =>
      one(to).then(
        (value) => ({ to, status: 'fulfilled' as const, value }),
        (reason: unknown) => ({ to, status: 'rejected' as const, reason }),
      ),
    ),
  );
  const refused: NonNullable<DeliveryReceipt['refused']> = [];
  const responses: string[] = [];
  let providerMessageId: string | undefined;
  for (const r of results) {
    if (r.status === 'fulfilled') {
      responses.push(r.value.response);
      // One transaction per recipient, one id each: the first is the message's (events about
      // the others match by the VERP token or the Message-ID header).
      providerMessageId ??= r.value.providerMessageId;
      refused.push(...(r.value.refused ?? []));
      continue;
    }
    const err = r.reason;
    if (!(err instanceof DeliveryError)) throw err;
    if (err.kind === 'service') throw err;
    const kind: RefusalKind = err.refused[0]?.kind ?? err.kind;
    refused.push({ address: r.to.toLowerCase(), kind, reason: err.message.slice(0, 500) });
  }
  const [response] = responses;
  if (response === undefined) {
    const kinds = new Set(refused.map((r) => r.kind));
    const [shared] = kinds.size === 1 ? kinds : [];
    throw new DeliveryError(
      shared ?? 'temporary',
      refused[0]?.reason ?? 'every recipient refused',
      refused.map((r) => r.address),
      refused,
    );
  }
  return {
    response,
    ...(providerMessageId !== undefined ? { providerMessageId } : {}),
    ...(refused.length > 0 ? { refused } : {}),
  };
}
