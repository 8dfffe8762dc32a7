import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import type { App } from '../../http/app-types.js';

const CHALLENGE = { 'www-authenticate': 'Bearer realm="mailroom-admin"' };

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

function bearer(request: FastifyRequest): string | undefined {
  const raw = request.headers.authorization;
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || value.trim() === '') return undefined;
  return /^Bearer\s+(\S+)$/i.exec(value.trim())?.[1];
}

/**
 * Guards every route of the admin context with `Authorization: Bearer <MAILROOM_ADMIN_TOKEN>`.
 * The check runs after the body is parsed (a malformed or oversized body is a 400/413 for
 * anyone, as everywhere in the API) and before it is validated, so only an operator learns
 * what the schemas expect. Comparing SHA-256 digests makes both sides the same length, so
 * timingSafeEqual reveals neither the token nor its length. API keys mean nothing here: a
 * sk_/pk_ value is just a wrong token.
 */
export function installAdminAuth(app: App, adminToken: string): void {
  const expected = digest(adminToken);
  app.addHook('preValidation', async (request) => {
    const presented = bearer(request);
    if (presented === undefined) {
      throw new ApiError('unauthorized', { message: 'Send the admin token: Authorization: Bearer <MAILROOM_ADMIN_TOKEN>.', headers: CHALLENGE });
    }
    if (!timingSafeEqual(digest(presented), expected)) {
      throw new ApiError('unauthorized', { message: 'The admin token is wrong.', headers: CHALLENGE });
    }
  });
}
