import { keyAuthenticates, type Caller } from '../domain/caller.js';
import type { Clock } from '../domain/clock.js';
import { ApiError } from '../errors/api-error.js';
import type { SignInLimiter } from '../protection/sign-in-limiter.js';
import type { Store } from '../storage/store.js';
import type { SmtpLog } from '../smtp/server.js';
import { AUTH_UNAVAILABLE, BAD_CREDENTIALS, type SmtpRefusal } from './replies.js';

/**
 * SMTP AUTH (PLAIN, LOGIN) for the submission listener (issue 28): the username is an
 * organization id, the password a private key of that organization, live or test. Public keys
 * never log in (they are published in web pages). Wrong logins count in the process's
 * SignInLimiter, the one wrong admin tokens count in, per client address: 5 in 15 minutes and
 * every further wrong one is 454 4.7.0 until the oldest leaves the window. The right key still
 * passes then, as the admin token does (behind NAT one typo-ing client must not lock out the rest).
 */

interface AuthDeps {
  store: Pick<Store, 'catalog'>;
  clock: Clock;
  signIns: SignInLimiter;
}

interface LoginAttempt {
  username: string;
  password: string;
  /** PLAIN's authorization identity: empty, or the username itself (no acting for another organization). */
  authzid?: string | undefined;
  /** The client's address as smtp-server reports it (the limiter keys `::ffff:a.b.c.d` as `a.b.c.d`). */
  address: string;
}

/**
 * What the session keeps after AUTH (in memory, for this connection only): the organization and
 * the key are read again per transaction through the catalog's cache, by the key's value.
 */
export interface Login {
  orgId: string;
  keyId: string;
  keyValue: string;
}

type LoginOutcome = { ok: true; login: Login } | { ok: false; refusal: SmtpRefusal; error?: unknown };

async function matches(deps: AuthDeps, attempt: LoginAttempt): Promise<Login | undefined> {
  if (attempt.authzid !== undefined && attempt.authzid !== '' && attempt.authzid !== attempt.username) return undefined;
  // sk_ only: a public key's value is not a secret, and the catalog stores it in clear.
  if (!attempt.password.startsWith('sk_')) return undefined;
  const key = await deps.store.catalog.keyByValue(attempt.password);
  if (key === undefined || key.type !== 'private' || key.org_id !== attempt.username) return undefined;
  if (!keyAuthenticates(key, deps.clock.now())) return undefined;
  return { orgId: key.org_id, keyId: key.id, keyValue: attempt.password };
}

/** Checks one AUTH; a storage error is 454 4.7.0 and not counted (RFC 4954 §6: a temporary failure). */
export async function checkLogin(deps: AuthDeps, attempt: LoginAttempt): Promise<LoginOutcome> {
  let login: Login | undefined;
  try {
    login = await matches(deps, attempt);
  } catch (error) {
    return { ok: false, refusal: AUTH_UNAVAILABLE, error };
  }
  if (login !== undefined) return { ok: true, login };
  const wait = deps.signIns.refuse(attempt.address);
  if (wait === undefined) return { ok: false, refusal: BAD_CREDENTIALS };
  return {
    ok: false,
    refusal: { code: 454, enhanced: '4.7.0', text: `Too many failed logins from this address; try again in ${wait} seconds` },
  };
}

/**
 * The caller of one mail transaction, read again at MAIL FROM: a key revoked (or past its
 * rotation grace) since AUTH, or an organization gone, ends what the session may do.
 */
export async function callerOf(deps: Pick<AuthDeps, 'store' | 'clock'>, login: Login): Promise<Caller> {
  const key = await deps.store.catalog.keyByValue(login.keyValue);
  const org = key === undefined ? undefined : await deps.store.catalog.organization(key.org_id);
  if (org === undefined || key === undefined || key.id !== login.keyId || !keyAuthenticates(key, deps.clock.now())) {
    throw new ApiError('invalid_private_key', { message: 'The key this session logged in with was revoked.' });
  }
  return { org, key };
}

/** Records that a key logged in or sent (issue 29's last_used_at), off the SMTP dialogue's path; a failure is logged. */
export function noteKeyUse(
  deps: { sendDeps: { store: Pick<Store, 'keyUse'>; clock: Clock }; log: SmtpLog },
  keyId: string,
): void {
  deps.sendDeps.store.keyUse.note(keyId, deps.sendDeps.clock.now(), (err) =>
    deps.log.warn({ err, key_id: keyId }, 'SMTP submission: recording a key use failed'),
  );
}
