import { ApiError } from '../errors/api-error.js';
import { checkPrivateKeyOrigin, type Caller } from '../http/auth.js';
import type { FastifyRequest } from 'fastify';
import { checkPublicOrigin, type RequestOrigin } from './origin.js';

export function requestOrigin(request: FastifyRequest): RequestOrigin {
  const pick = (name: string) => {
    const v = request.headers[name];
    const s = Array.isArray(v) ? v[0] : v;
    return s === undefined || s === '' ? undefined : s;
  };
  return { origin: pick('origin'), referer: pick('referer') };
}

/**
 * Organization and key rules that come before anything else (send path step 2): suspended or
 * unverified organizations, "require a private key", private keys in browsers, and the
 * allowed-origins rules of public keys.
 */
export function checkCaller(request: FastifyRequest, caller: Caller): void {
  const { org, key } = caller;
  if (org.suspended) throw new ApiError('organization_suspended');
  if (!org.email_verified) throw new ApiError('email_not_verified');
  if (key.type === 'private') {
    checkPrivateKeyOrigin(request, caller);
    return;
  }
  if (org.security.require_private_key) {
    throw new ApiError('private_key_required', { message: 'This organization accepts sends with a private key only.' });
  }
  checkPublicOrigin(org, requestOrigin(request));
}
