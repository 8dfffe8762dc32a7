import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import type { App, AppServices } from '../../http/app-types.js';
import type { Clock } from '../../domain/clock.js';
import { headerValue } from '../../http/headers.js';
import { SignInLimiter } from '../../protection/sign-in-limiter.js';
import { originAllowed, requestSession, secretsEqual, sessionCookieValue, type SessionDeps } from '../session.js';

const CHALLENGE = { 'www-authenticate': 'Bearer realm="mailroom-admin"' };

/** Methods that change nothing: a cookie alone may call them (no CSRF token). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The one route open to anyone: it is where the token is presented. */
export const SIGN_IN_ROUTE = '/admin/v1/session';

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

function bearer(request: FastifyRequest): string | undefined {
  const raw = request.headers.authorization;
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || value.trim() === '') return undefined;
  return /^Bearer\s+(\S+)$/i.exec(value.trim())?.[1];
}

/** Whether `presented` is the admin token; SHA-256 digests make both sides the same length. */
export function adminTokenMatcher(adminToken: string): (presented: string) => boolean {
  const expected = digest(adminToken);
  return (presented) => timingSafeEqual(digest(presented), expected);
}

/**
 * Checks a presented admin token for a client address, throwing when it may not pass. The right
 * token always passes: behind a proxy MAILROOM_TRUST_PROXY does not name, every client shares one
 * address, and a lockout that refused it let one person's typos (or anyone on the internet) lock
 * every operator out for 15 minutes (issue 25). A wrong one is 429 `rate_limited` (with
 * Retry-After) once the address has too many wrong tokens, else 401 `unauthorized`, which counts.
 * Guessing is stopped by the token's length (32 characters or more, src/config/env.ts), the
 * throttle only slows it. One gate serves POST /session and the bearer on every admin route, so
 * both draw on the same per-address budget; `limiter` is the process's (AppServices.signIns), which
 * the SMTP submission listener's wrong logins draw on too (issue 28).
 */
export type AdminTokenGate = (presented: string, address: string, challenge?: Record<string, string>) => void;

export function adminTokenGate(adminToken: string, clock: Clock, limiter = new SignInLimiter(clock)): AdminTokenGate {
  const matches = adminTokenMatcher(adminToken);
  return (presented, address, challenge) => {
    if (matches(presented)) return;
    const wait = limiter.refuse(address);
    if (wait !== undefined) {
      throw new ApiError('rate_limited', {
        message: `Too many wrong admin tokens from this address: try again in ${wait} seconds.`,
        headers: { 'retry-after': String(wait) },
      });
    }
    throw new ApiError('unauthorized', {
      message: 'The admin token is wrong.',
      ...(challenge === undefined ? {} : { headers: challenge }),
    });
  };
}

/**
 * Guards every route of the admin context with EITHER `Authorization: Bearer
 * <MAILROOM_ADMIN_TOKEN>` OR the operator UI's session cookie. The check runs after the body is
 * parsed (a malformed or oversized body is a 400/413 for anyone, as everywhere in the API) and
 * before it is validated, so only an operator learns what the schemas expect. Comparing SHA-256
 * digests makes both sides the same length, so timingSafeEqual reveals neither the token nor
 * its length. API keys mean nothing here: a sk_/pk_ value is just a wrong token. Wrong tokens
 * count against the client address as failed sign-ins do (`gate`), so a bearer is no way
 * around the sign-in limit.
 *
 * A header, when sent, decides alone (a script's wrong token is not rescued by a browser's
 * cookie). With the cookie, a state-changing method must carry the session's CSRF token, and a
 * browser's Origin must be this server: the cookie is SameSite=Strict already, these two hold
 * even where SameSite is not honoured.
 */
export function installAdminAuth(app: App, services: AppServices, gate: AdminTokenGate): void {
  const deps: SessionDeps = services;
  app.addHook('preValidation', async (request) => {
    if (request.method === 'POST' && request.routeOptions.url === SIGN_IN_ROUTE) {
      if (!originAllowed(request, services.config.baseUrl)) throw crossOrigin();
      return;
    }
    const presented = bearer(request);
    if (presented !== undefined || request.headers.authorization !== undefined || sessionCookieValue(request) === undefined) {
      if (presented === undefined) {
        throw new ApiError('unauthorized', {
          message: 'Send the admin token: Authorization: Bearer <MAILROOM_ADMIN_TOKEN>, or sign in to the operator UI.',
          headers: CHALLENGE,
        });
      }
      gate(presented, request.ip, CHALLENGE);
      return;
    }
    const session = await requestSession(deps, request);
    if (session === undefined) {
      throw new ApiError('unauthorized', {
        message: 'The operator UI session has expired or was ended: sign in again.',
        headers: CHALLENGE,
      });
    }
    if (SAFE_METHODS.has(request.method)) return;
    if (!originAllowed(request, services.config.baseUrl)) throw crossOrigin();
    const csrf = headerValue(request, 'x-csrf-token');
    if (csrf === undefined || !secretsEqual(csrf, session.csrfToken)) {
      throw new ApiError('forbidden', {
        message:
          "A call made with the session cookie must carry the session's CSRF token in X-CSRF-Token (the csrf_token of POST " +
          '/admin/v1/session).',
      });
    }
  });
}

function crossOrigin(): ApiError {
  return new ApiError('forbidden', {
    message: 'The Origin header names another site: the admin API takes state-changing calls from its own origin only.',
  });
}
