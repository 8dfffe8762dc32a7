import type { SMTPServerOptions } from 'smtp-server';
import { splitVerpAddress } from '../delivery/verp.js';
import { createSmtpServer, listenSmtp, readMessage, smtpError, type SmtpListening, type SmtpLog } from '../smtp/server.js';
import { handleInbound, type DropReason, type InboundDeps } from './handle.js';

/**
 * The inbound SMTP listener (`mailroom serve` with MAILROOM_INBOUND_SMTP_PORT): where bounces
 * and feedback reports for VERP addresses arrive. It is an MX, not a relay: no AUTH, RCPT only
 * for the bounce domains and complaint addresses services configured, 10 MB at most, a bounded
 * number of connections. A report is answered 250 only once its events are stored (record's
 * transaction resolved), 451 on a storage error so the sending MTA tries again later.
 */

export const MAX_INBOUND_BYTES = 10 * 1024 * 1024;

export interface InboundAddresses {
  /** Lower-cased bounce domains: bounce+<token>@<domain> is accepted at RCPT. */
  domains: ReadonlySet<string>;
  /** Lower-cased complaint addresses, accepted as they are. */
  complaintAddresses: ReadonlySet<string>;
}

export interface ListenerDeps extends InboundDeps {
  /** What is accepted now (services change at run time: the caller may cache briefly). */
  addresses(): Promise<InboundAddresses>;
  /** Every message handled: recorded, or dropped with why (counted on /metrics). */
  counted(outcome: 'recorded' | DropReason | 'refused' | 'storage_error'): void;
  log: SmtpLog;
}

export interface ListenerOptions {
  port: number;
  host: string;
  maxClients?: number;
  /** Sees how many bytes of the message in progress are held after each chunk (tests check the bound). */
  onBytesKept?: (bytes: number) => void;
}

export type InboundListener = SmtpListening;

export async function startInboundListener(deps: ListenerDeps, options: ListenerOptions): Promise<InboundListener> {
  const serverOptions: SMTPServerOptions = {
    banner: 'mailroom bounce processor',
    // No AUTH: this is an MX for bounce addresses. No STARTTLS: reports carry nothing secret
    // and smtp-server's built-in certificate would only be a pretence (see README).
    disabledCommands: ['AUTH', 'STARTTLS'],
    authOptional: true,
    size: MAX_INBOUND_BYTES,
    maxClients: options.maxClients ?? 50,
    socketTimeout: 60_000,
    onRcptTo(address, _session, callback) {
      const rcpt = address.address.trim().toLowerCase();
      deps.addresses().then(
        (known) => {
          const verp = splitVerpAddress(rcpt);
          if (known.complaintAddresses.has(rcpt) || (verp !== undefined && known.domains.has(verp.domain))) return callback();
          deps.counted('refused');
          callback(smtpError(550, '5.7.1 Relaying denied: not a bounce address of this server'));
        },
        (error: unknown) => {
          deps.log.error({ err: error }, 'inbound SMTP: reading the bounce addresses failed');
          callback(smtpError(451, '4.3.0 Temporary local problem, try again later'));
        },
      );
    },
    onData(stream, session, callback) {
      // The client cut the connection mid-DATA: the stream's error ends the transaction.
      readMessage(stream, MAX_INBOUND_BYTES, options.onBytesKept).then((message) => {
        if (message === 'too_big') {
          deps.counted('refused');
          return callback(smtpError(552, '5.3.4 Message too big for this server (10 MB at most)'));
        }
        const rcptTo = session.envelope.rcptTo.map((a) => a.address.toLowerCase());
        handleInbound(deps, message, rcptTo).then(
          (outcome) => {
            if (outcome.kind === 'recorded') deps.counted('recorded');
            else {
              deps.counted(outcome.reason);
              if (outcome.reason === 'bad_token')
                deps.log.warn(
                  { rcptTo, remote: session.remoteAddress },
                  'inbound SMTP: a report under a VERP token whose MAC fails (forged or from another installation); dropped',
                );
            }
            // Dropped mail is still answered 250: a refusal would only make the sender's MTA
            // mail a bounce of the bounce.
            callback();
          },
          (error: unknown) => {
            deps.counted('storage_error');
            deps.log.error({ err: error, rcptTo }, 'inbound SMTP: recording a report failed; answered 451');
            callback(smtpError(451, '4.3.0 Temporary local problem, try again later'));
          },
        );
      }, callback);
    },
  };
  return listenSmtp(createSmtpServer(serverOptions, deps.log, 'inbound SMTP'), options.port, options.host);
}
