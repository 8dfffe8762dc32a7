import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import type { SignInLimiter } from '../protection/sign-in-limiter.js';
import type { SendDeps } from '../send/accept.js';
import { checkLogin, type Login } from './auth.js';
import { transactionHooks, type SubmissionPipeline } from './transaction.js';
import { ownEnhancedCodes, smtpError, TLS_FIRST } from './replies.js';

/**
 * The SMTP submission listener of `mailroom serve` (issue 28): an authenticated MSA in front of
 * the send path. One SMTPServer on MAILROOM_SUBMISSION_PORT (STARTTLS when a certificate is
 * set) and, with MAILROOM_SUBMISSION_TLS_PORT, a second with implicit TLS; the same hooks.
 */

/** 50 recipients per message: SES, Postmark and Resend cap one message at 50 addresses. */
export const MAX_RECIPIENTS = 50;
/** What a server closing (SIGTERM) gives open sessions before it cuts them, ms: inside serve's 10 s grace. */
const CLOSE_TIMEOUT_MS = 5_000;

export interface SubmissionLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface SubmissionDeps {
  sendDeps: SendDeps;
  /** The process's limiter: the admin gate's wrong tokens and our wrong logins share it. */
  signIns: SignInLimiter;
  /** What DATA and RCPT call (src/send/submission.ts), and the sizes they allow. */
  pipeline: SubmissionPipeline;
  log: SubmissionLog;
}

export interface TlsPair {
  cert: Buffer;
  key: Buffer;
}

export interface SubmissionOptions {
  port: number;
  host: string;
  /** An implicit-TLS listener beside it (465); needs `tls`. */
  tlsPort?: number | undefined;
  /** Certificate and key: STARTTLS offered, implicit TLS possible. Absent: STARTTLS disabled. */
  tls?: TlsPair | undefined;
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
  updateCertificate(pair: TlsPair): void;
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
    logger: false,
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
    closeTimeout: CLOSE_TIMEOUT_MS,
    disableReverseLookup: true,
    onConnect(session, callback) {
      // The connection is in `connections` before onConnect runs (smtp-server.js connect()).
      for (const c of server()?.connections ?? []) if (c.id === session.id) ownEnhancedCodes(c);
      callback();
    },
    onAuth(auth, session, callback) {
      // Defence only: with STARTTLS offered the library refuses first (538), and production
      // without a certificate or ALLOW_INSECURE does not start (src/config/env-submission.ts).
      if (!session.secure && !options.allowInsecureAuth) return callback(smtpError(TLS_FIRST));
      const attempt = {
        username: auth.username ?? '',
        password: auth.password ?? '',
        authzid: auth.authzid,
        address: session.remoteAddress,
      };
      checkLogin({ store: deps.sendDeps.store, clock: deps.sendDeps.clock, signIns: deps.signIns }, attempt).then(
        (outcome) => {
          if (outcome.ok) return callback(null, { user: outcome.login satisfies Login });
          if (outcome.error !== undefined)
            deps.log.warn({ err: outcome.error, remote: session.remoteAddress }, 'SMTP submission: checking a login failed');
          callback(smtpError(outcome.refusal));
        },
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
      );
    },
    ...transactionHooks(deps, options),
  };
}

async function listen(server: SMTPServer, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const address = server.server.address();
  return address !== null && typeof address === 'object' ? (address satisfies AddressInfo).port : port;
}

function create(deps: SubmissionDeps, options: SubmissionOptions, secure: boolean): SMTPServer {
  let current: SMTPServer | undefined;
  const server = new SMTPServer(serverOptions(deps, options, secure, () => current));
  current = server;
  // A client's reset, a failed TLS handshake or a socket error must never end the process:
  // smtp-server emits them on the server (connection errors are forwarded there).
  server.on('error', (error: Error) =>
    deps.log.warn({ err: error.message, code: (error as { code?: unknown }).code }, 'SMTP submission connection error'),
  );
  return server;
}

export async function startSubmissionListener(deps: SubmissionDeps, options: SubmissionOptions): Promise<SubmissionListener> {
  const plain = create(deps, options, false);
  const port = await listen(plain, options.port, options.host);
  let tlsServer: SMTPServer | undefined;
  let tlsPort: number | undefined;
  if (options.tlsPort !== undefined && options.tls !== undefined) {
    tlsServer = create(deps, options, true);
    try {
      tlsPort = await listen(tlsServer, options.tlsPort, options.host);
    } catch (error) {
      await new Promise<void>((resolve) => plain.close(() => resolve()));
      throw error;
    }
  }
  const servers = tlsServer === undefined ? [plain] : [plain, tlsServer];
  return {
    port,
    tlsPort,
    updateCertificate(pair) {
      for (const s of servers) s.updateSecureContext({ key: pair.key, cert: pair.cert });
    },
    close: async () => {
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}
