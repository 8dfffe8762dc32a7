import type { SMTPServerOptions, SMTPServerSession } from 'smtp-server';
import type { Caller } from '../domain/caller.js';
import type { ClientInfo } from '../domain/client.js';
import type { Organization } from '../domain/types.js';
import type { SendDeps } from '../send/accept.js';
import type { Submission, SubmissionAccepted } from '../send/submission.js';
import { checkCaller } from '../send/permissions.js';
import { unmappedIp } from '../net/ip-address.js';
import { callerOf, noteKeyUse, type Login } from './auth.js';
import { readMessage, type SmtpLog } from '../smtp/server.js';
import { refusalError, replyFor, type SmtpRefusal } from './replies.js';

/**
 * One mail transaction of the submission listener: MAIL FROM (the caller read again, its rules,
 * SIZE= against its plan), RCPT TO (each address on its own: a suppressed one is refused, the
 * others go on) and DATA (bounded by the plan's size, then one durable message before the 250).
 */

/** What the listener calls of the send path (wiring.ts passes src/send/submission.ts). */
export interface SubmissionPipeline {
  accept(deps: SendDeps, s: Submission): Promise<SubmissionAccepted>;
  checkRecipient(deps: SendDeps, caller: Caller, address: string, accepted: readonly string[]): Promise<void>;
  /** The most bytes a DATA may have for this organization. */
  sizeLimit(org: Organization): number;
  /** EHLO's SIZE: the largest sizeLimit of any plan. */
  maxSize: number;
}

interface TransactionDeps {
  sendDeps: SendDeps;
  pipeline: SubmissionPipeline;
  log: SmtpLog;
}

type Hooks = Pick<SMTPServerOptions, 'onMailFrom' | 'onRcptTo' | 'onData'>;

const tooBig = (limit: number): SmtpRefusal => ({
  code: 552,
  enhanced: '5.3.4',
  text: `Message size exceeds the limit for this organization (${limit} bytes)`,
});

function loginOf(session: SMTPServerSession): Login | undefined {
  const user: unknown = session.user;
  return typeof user === 'object' && user !== null && 'keyValue' in user ? (user as Login) : undefined;
}

/** The SMTP peer as the send path's client: an address, and nothing a browser would send. */
function smtpClient(session: SMTPServerSession): ClientInfo {
  return {
    ip: unmappedIp(session.remoteAddress),
    origin: undefined,
    referer: undefined,
    userAgent: undefined,
    secChUa: undefined,
  };
}

export function transactionHooks(deps: TransactionDeps, options: { onBytesKept?: ((bytes: number) => void) | undefined }): Hooks {
  // The caller of each session's current transaction, read at MAIL FROM (a WeakMap: gone with the session).
  const callers = new WeakMap<SMTPServerSession, Caller>();
  const fail = (err: unknown, session: SMTPServerSession, stage: string): Error => {
    const { reply, known } = replyFor(err);
    if (!known) deps.log.error({ err, stage, remote: session.remoteAddress }, 'SMTP submission: unexpected error; answered 451');
    return refusalError(reply);
  };
  return {
    onMailFrom(address, session, callback) {
      const login = loginOf(session);
      callers.delete(session);
      if (login === undefined) return callback(fail(new Error('MAIL FROM without a login'), session, 'mail'));
      (async () => {
        const caller = await callerOf(deps.sendDeps, login);
        // A session may send for hours after its AUTH: each transaction is a use of the key.
        noteKeyUse(deps, caller.key.id);
        // The organization's rules (suspended, e-mail not verified), as a send's step 2. No flood
        // guard: it guards public keys only, and a login is always a private key.
        checkCaller(caller, smtpClient(session));
        const limit = deps.pipeline.sizeLimit(caller.org);
        const declared = address.args === false ? undefined : (address.args as Record<string, string | undefined>).SIZE;
        // RFC 1870: a declared size over the limit is refused here, before the client sends the message.
        if (declared !== undefined && Number(declared) > limit) return refusalError(tooBig(limit));
        callers.set(session, caller);
        return undefined;
      })().then(
        (refused) => callback(refused ?? null),
        (err: unknown) => callback(fail(err, session, 'mail')),
      );
    },
    onRcptTo(address, session, callback) {
      const caller = callers.get(session);
      if (caller === undefined) return callback(fail(new Error('RCPT TO without a caller'), session, 'rcpt'));
      const accepted = session.envelope.rcptTo.map((a) => a.address);
      deps.pipeline.checkRecipient(deps.sendDeps, caller, address.address, accepted).then(
        () => callback(),
        (err: unknown) => callback(fail(err, session, 'rcpt')),
      );
    },
    onData(stream, session, callback) {
      const caller = callers.get(session);
      const limit = caller === undefined ? 0 : deps.pipeline.sizeLimit(caller.org);
      // L8: bytes past the limit are dropped as they arrive, so memory stays bounded per session.
      readMessage(stream, limit, options.onBytesKept).then((mime) => {
        if (caller === undefined) return callback(fail(new Error('DATA without a caller'), session, 'data'));
        if (mime === 'too_big') return callback(refusalError(tooBig(limit)));
        const submission: Submission = {
          caller,
          client: smtpClient(session),
          recipients: session.envelope.rcptTo.map((a) => a.address),
          mime,
        };
        deps.pipeline.accept(deps.sendDeps, submission).then(
          // Only now, with the message committed: the 250 is as durable as the API's 202.
          (accepted) => callback(null, `2.0.0 Ok: queued as ${accepted.messageId}`),
          (err: unknown) => callback(fail(err, session, 'data')),
        );
      }, callback);
    },
  };
}
