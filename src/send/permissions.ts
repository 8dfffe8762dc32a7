import { ApiError } from '../errors/api-error.js';
import { checkPrivateKeyOrigin, type Caller } from '../http/auth.js';
import type { FastifyRequest } from 'fastify';
import { clientInfo, type ClientInfo } from '../protection/client-ip.js';
import { headlessSign } from '../protection/headless.js';
import type { Protection } from '../protection/index.js';
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
 * unverified organizations, "require a private key", private keys in browsers, the
 * allowed-origins rules of public keys and, when the organization blocks them, headless
 * browsers (public keys only: a private key belongs to the organization's own server).
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
  if (org.security.block_headless) {
    const sign = headlessSign({ userAgent: headerOf(request, 'user-agent'), secChUa: headerOf(request, 'sec-ch-ua') });
    if (sign !== undefined) throw new ApiError('headless_blocked', { details: { reason: sign } });
  }
}

function headerOf(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Send path step 2 in full: a public-key request first counts toward its organization's flood
 * guard (the only limit a request that fails before the template and CAPTCHA checks meets),
 * then the caller rules of `checkCaller`. Returns what the later steps need of the client.
 */
export async function admitCaller(request: FastifyRequest, caller: Caller, protection: Protection): Promise<ClientInfo> {
  await protection.limits.floodGuard(caller);
  checkCaller(request, caller);
  return clientInfo(request);
}
