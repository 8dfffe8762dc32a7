import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config/env.js';
import type { Clock } from '../domain/clock.js';
import { headerValue } from '../http/headers.js';
import type { AdminSession } from '../storage/admin-sessions.js';
import type { Store } from '../storage/store.js';

/**
 * The operator UI's sign-in (issue 15): the admin token is exchanged once for a random session
 * id in an HttpOnly, SameSite=Strict cookie, so the page never holds the token. The page gets
 * only the CSRF token, which must come back in X-CSRF-Token on every state-changing call made
 * with the cookie.
 */

export const SESSION_COOKIE = 'mailroom_session';

export interface SessionDeps {
  store: Pick<Store, 'adminSessions'>;
  clock: Clock;
  config: Pick<Config, 'uiSessionMs' | 'env' | 'baseUrl' | 'adminToken'>;
}

const sha256 = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * What is stored for a cookie: HMAC-SHA256 of its value keyed by the admin token. Only a hash is
 * kept, so a copy of the database signs nobody in; keyed by the token, so changing
 * MAILROOM_ADMIN_TOKEN ends every session (the old rows match no cookie any more and age out).
 */
function idHash(deps: SessionDeps, cookieValue: string): string {
  const key = deps.config.adminToken;
  // Unreachable: the session routes and the admin hook exist only when the token is set.
  if (key === undefined) throw new Error('operator UI sessions need MAILROOM_ADMIN_TOKEN');
  return createHmac('sha256', key).update(cookieValue, 'utf8').digest('hex');
}
const random = (): string => randomBytes(32).toString('base64url');

/** Equal strings, compared in constant time over their digests (lengths are not revealed either). */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

/** A new session; expired rows are removed on the way (sign-ins are rare, the table small). */
export async function startSession(deps: SessionDeps): Promise<{ cookieValue: string; session: AdminSession }> {
  const now = deps.clock.now();
  await deps.store.adminSessions.purgeExpired(now);
  const cookieValue = random();
  const session: AdminSession = {
    idHash: idHash(deps, cookieValue),
    csrfToken: random(),
    createdAt: now,
    expiresAt: now + deps.config.uiSessionMs,
  };
  await deps.store.adminSessions.insert(session);
  return { cookieValue, session };
}

/** The live session the request's cookie names, if any. */
export async function requestSession(deps: SessionDeps, request: FastifyRequest): Promise<AdminSession | undefined> {
  const value = sessionCookieValue(request);
  // A real id is 43 characters; anything far off is not worth a query.
  if (value === undefined || value.length > 128) return undefined;
  return deps.store.adminSessions.live(idHash(deps, value), deps.clock.now());
}

/** Ends the session the request's cookie names, if it names one (sign-out, and a new sign-in). */
export async function endSession(deps: SessionDeps, request: FastifyRequest): Promise<void> {
  const value = sessionCookieValue(request);
  if (value !== undefined && value.length <= 128) await deps.store.adminSessions.delete(idHash(deps, value));
}

export function sessionCookieValue(request: FastifyRequest): string | undefined {
  const header = headerValue(request, 'cookie');
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return value === '' ? undefined : value;
    }
  }
  return undefined;
}

/**
 * Secure in production and whenever MAILROOM_BASE_URL is https (a development server behind TLS
 * too); Path=/ so a path prefix in front still works.
 */
export function sessionCookie(deps: SessionDeps, value: string): string {
  return (
    `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; ` +
    `Max-Age=${Math.floor(deps.config.uiSessionMs / 1000)}${secure(deps)}`
  );
}

export function clearedSessionCookie(deps: SessionDeps): string {
  return `${SESSION_COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict${secure(deps)}`;
}

const secure = (deps: SessionDeps): string =>
  deps.config.env === 'production' || new URL(deps.config.baseUrl).protocol === 'https:' ? '; Secure' : '';

/**
 * Whether an `Origin` header, when there is one, names this server: the Host the request was
 * sent to, or MAILROOM_BASE_URL's origin (behind a proxy that rewrites Host). Browsers send
 * Origin on every cross-origin request and on same-origin ones other than GET/HEAD.
 */
export function originAllowed(request: FastifyRequest, baseUrl: string): boolean {
  const origin = headerValue(request, 'origin');
  if (origin === undefined) return true;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false; // `null` (a sandboxed frame, a file:) and anything unparsable
  }
  if (parsed.origin === new URL(baseUrl).origin) return true;
  const host = headerValue(request, 'host');
  return (
    host !== undefined && parsed.host === host.toLowerCase() && (parsed.protocol === 'http:' || parsed.protocol === 'https:')
  );
}
