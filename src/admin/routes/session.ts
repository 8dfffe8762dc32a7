import { Type } from '@sinclair/typebox';
import { ApiError } from '../../errors/api-error.js';
import type { App, AppServices } from '../../http/app-types.js';
import { responses, Timestamp } from '../../http/schemas.js';
import { iso } from '../../http/time.js';
import type { AdminSession } from '../../storage/admin-sessions.js';
import { clearedSessionCookie, endSession, requestSession, sessionCookie, startSession, type SessionDeps } from '../session.js';
import type { AdminTokenGate } from './auth.js';
import { ADMIN_BODY_ERRORS, ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, NoContent } from './common.js';

const SignInInput = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 4096, description: 'MAILROOM_ADMIN_TOKEN' }),
  },
  { additionalProperties: false },
);

const SessionResource = Type.Object({
  expires_at: Timestamp,
  csrf_token: Type.String({
    description: 'Send back in X-CSRF-Token on every call other than GET/HEAD/OPTIONS made with the session cookie',
  }),
});

/**
 * GET /session with the admin token as a bearer (issue 25): a script asking "am I signed in?"
 * learns that it is, by bearer. The session's fields say what they mean for a bearer: it never
 * expires (MAILROOM_ADMIN_TOKEN holds until it is changed) and needs no CSRF token.
 */
const BearerAuthResource = Type.Object({
  auth: Type.Literal('bearer', {
    description: 'The request was authorized by Authorization: Bearer <MAILROOM_ADMIN_TOKEN>, not by a UI session',
  }),
  expires_at: Type.Null({ description: 'null: the admin token does not expire' }),
  csrf_token: Type.Null({ description: 'null: calls made with the bearer need no X-CSRF-Token' }),
});

const COOKIE_NOTE =
  'The session is the `mailroom_session` cookie (HttpOnly, ' +
  'SameSite=Strict, Secure in production or when MAILROOM_BASE_URL is https).';

const body = (s: AdminSession) => ({ expires_at: iso(s.expiresAt), csrf_token: s.csrfToken });

/**
 * The operator UI's sign-in, session check and sign-out (issue 15). The admin hook lets
 * POST /session through without credentials; the other two go through it like any admin
 * route (DELETE with the cookie thus needs the CSRF token). `gate` is the admin hook's too, so
 * wrong tokens here and wrong bearers elsewhere share one per-address limit.
 */
export function registerSessionRoutes(app: App, services: AppServices, gate: AdminTokenGate): void {
  const deps: SessionDeps = services;

  app.post(
    '/session',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: [],
        summary: 'Sign in to the operator UI: exchange the admin token for a session cookie',
        description:
          `${COOKIE_NOTE} After 5 wrong admin tokens from one client address within 15 minutes ` +
          `(here or as a bearer on any admin route), every wrong token from it is refused with 429 ` +
          `and Retry-After until the oldest leaves the window (counted per process); the right ` +
          `token is always accepted. A still-valid session named by the request's cookie is ended first.`,
        body: SignInInput,
        response: responses({ 200: SessionResource }, [...ADMIN_BODY_ERRORS, 'rate_limited', 'forbidden']),
      },
    },
    async (request, reply) => {
      gate(request.body.token, request.ip);
      // Signing in again replaces the browser's session: the old one must not stay usable by
      // whoever copied its cookie.
      await endSession(deps, request);
      const { cookieValue, session } = await startSession(deps);
      return reply.header('set-cookie', sessionCookie(deps, cookieValue)).header('cache-control', 'no-store').send(body(session));
    },
  );

  app.get(
    '/session',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary:
          'The operator UI session the cookie holds, or {"auth": "bearer", …} for the admin token as a bearer (401 with neither)',
        description:
          `${COOKIE_NOTE} With the cookie: the session's expiry and CSRF ` +
          `token. With \`Authorization: Bearer <MAILROOM_ADMIN_TOKEN>\` ` +
          '(which decides alone when sent, as on every admin route): `{"auth": "bearer", ' +
          '"expires_at": null, "csrf_token": null}`. A wrong bearer is 401 like anywhere else.',
        response: responses({ 200: Type.Union([SessionResource, BearerAuthResource]) }, ADMIN_ERRORS),
      },
    },
    async (request, reply) => {
      // The admin hook has checked it: an Authorization header that reaches here is the right token.
      if (request.headers.authorization !== undefined) {
        return reply.header('cache-control', 'no-store').send({ auth: 'bearer' as const, expires_at: null, csrf_token: null });
      }
      const session = await requestSession(deps, request);
      if (session === undefined) throw new ApiError('unauthorized', { message: 'No operator UI session: sign in.' });
      return reply.header('cache-control', 'no-store').send(body(session));
    },
  );

  app.delete(
    '/session',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Sign out of the operator UI: the session ends in every process and the cookie is cleared',
        description: `${COOKIE_NOTE} With the cookie, X-CSRF-Token is required.`,
        response: responses({ 204: NoContent }, [...ADMIN_ERRORS, 'forbidden']),
      },
    },
    async (request, reply) => {
      await endSession(deps, request);
      return reply.code(204).header('set-cookie', clearedSessionCookie(deps)).send();
    },
  );
}
