import type { SMTPServer, SMTPServerOptions } from 'smtp-server';
import type { TlsMaterial } from '../config/tls.js';
import type { SignInLimiter } from '../protection/sign-in-limiter.js';
import type { SendDeps } from '../send/accept.js';
import { checkLogin, noteKeyUse, type Login } from './auth.js';
import { transactionHooks, type SubmissionPipeline } from './transaction.js';
import { createSmtpServer, listenSmtp, type SmtpListening, type SmtpLog } from '../smtp/server.js';
import { ownEnhancedCodes, refusalError, TLS_FIRST } from './replies.js';

/**
 * The SMTP submission listener of `mailroom serve` (issue 28): an authenticated MSA in front of
 * the send path. One SMTPServer on MAILROOM_SUBMISSION_PORT (STARTTLS when a certificate is
 * set) and, with MAILROOM_SUBMISSION_TLS_PORT, a second with implicit TLS; the same hooks.
 */

/** 50 recipients per message: SES, Postmark and Resend cap one message at 50 addresses. */
const MAX_RECIPIENTS = 50;

export interface SubmissionDeps {
  sendDeps: SendDeps;
  /** The process's limiter: the admin gate's wrong tokens and our wrong logins share it. */
  signIns: SignInLimiter;
  /** What DATA and RCPT call (src/send/submission.ts), and the sizes they allow. */
  pipeline: SubmissionPipeline;
  log: SmtpLog;
}

export interface SubmissionOptions {
  port: number;
  host: string;
  /** An implicit-TLS listener beside it (465); needs `tls`. */
  tlsPort?: number | undefined;
  /** Certificate and key: STARTTLS offered, implicit TLS possible. Absent: STARTTLS disabled. */
  tls?: TlsMaterial | undefined;
  /** Development, or MAILROOM_SUBMISSION_ALLOW_INSECURE=true: AUTH before (or without) TLS. */
  allowInsecureAuth: boolean;
  maxClients: number;
  idleMs: number;
  /** The host name in the greeting and EHLO (the base URL's). */
  name: string;
  /** Sees how many bytes of the message in progress are held after each chunk (tests check the bound). */
  onBytesKept?: ((bytes: number) => void) | undefined;
}

export interface SubmissionListener {
  port: number;
  tlsPort: number | undefined;
  /** SIGHUP: new handshakes get the new certificate, open sessions keep theirs. */
  updateCertificate(pair: TlsMaterial): void;
  close(): Promise<void>;
}

function serverOptions(
  deps: SubmissionDeps,
  options: SubmissionOptions,
  secure: boolean,
  server: () => SMTPServer | undefined,
): SMTPServerOptions {
  return {
    name: options.name,
    banner: 'mailroom submission',
    secure,
    ...(options.tls === undefined ? {} : { key: options.tls.key, cert: options.tls.cert }),
    // Never smtp-server's built-in certificate (its private key is public): no files, no STARTTLS.
    disabledCommands: options.tls === undefined || secure ? ['STARTTLS'] : [],
    authMethods: ['PLAIN', 'LOGIN'],
    authOptional: false,
    allowInsecureAuth: options.allowInsecureAuth,
    size: deps.pipeline.maxSize,
    hideENHANCEDSTATUSCODES: false,
    hideDSN: true,
    hideREQUIRETLS: true,
    maxClients: options.maxClients,
    maxRecipients: MAX_RECIPIENTS,
    socketTimeout: options.idleMs,
    onConnect(session, callback) {
      // The connection is in `connections` before onConnect runs (smtp-server.js connect()).
      for (const c of server()?.connections ?? []) if (c.id === session.id) ownEnhancedCodes(c);
      callback();
    },
    onAuth(auth, session, callback) {
      // Defence only: with STARTTLS offered the library refuses first (538), and production
      // without a certificate or ALLOW_INSECURE does not start (src/config/env-submission.ts).
      if (!session.secure && !options.allowInsecureAuth) return callback(refusalError(TLS_FIRST));
      const attempt = {
        username: auth.username ?? '',
        password: auth.password ?? '',
        authzid: auth.authzid,
        address: session.remoteAddress,
      };
      checkLogin({ store: deps.sendDeps.store, clock: deps.sendDeps.clock, signIns: deps.signIns }, attempt).then(
        (outcome) => {
          if (outcome.ok) {
            noteKeyUse(deps, outcome.login.keyId);
            return callback(null, { user: outcome.login satisfies Login });
          }
          if (outcome.error !== undefined)
            deps.log.warn({ err: outcome.error, remote: session.remoteAddress }, 'SMTP submission: checking a login failed');
          callback(refusalError(outcome.refusal));
        },
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
      );
    },
    ...transactionHooks(deps, options),
  };
}

function create(deps: SubmissionDeps, options: SubmissionOptions, secure: boolean): SMTPServer {
  let current: SMTPServer | undefined;
  const server = createSmtpServer(
    serverOptions(deps, options, secure, () => current),
    deps.log,
    'SMTP submission',
  );
  current = server;
  return server;
}

export async function startSubmissionListener(deps: SubmissionDeps, options: SubmissionOptions): Promise<SubmissionListener> {
  const plain = create(deps, options, false);
  const servers = [plain];
  const listening: SmtpListening[] = [];
  try {
    listening.push(await listenSmtp(plain, options.port, options.host));
    if (options.tlsPort !== undefined && options.tls !== undefined) {
      const tlsServer = create(deps, options, true);
      servers.push(tlsServer);
      listening.push(await listenSmtp(tlsServer, options.tlsPort, options.host));
    }
  } catch (error) {
    // The second port failed: the first must not keep listening.
    await Promise.all(listening.map((l) => l.close()));
    throw error;
  }
  return {
    port: listening[0]?.port ?? options.port,
    tlsPort: listening[1]?.port,
    updateCertificate(pair) {
      for (const s of servers) s.updateSecureContext({ key: pair.key, cert: pair.cert });
    },
    close: async () => {
      await Promise.all(listening.map((l) => l.close()));
    },
  };
}
