import { ApiError } from '../errors/api-error.js';
import { checkPrivateKeyOrigin, type Caller } from '../http/auth.js';
import type { FastifyRequest } from 'fastify';
import { clientInfo, type ClientInfo } from '../protection/client-ip.js';
import { headlessSign } from '../protection/headless.js';
import type { Protection } from '../protection/index.js';
import { checkPublicOrigin } from './origin.js';

/**
 * Organization and key rules that come before anything else (send path step 2): suspended or
 * unverified organizations, "require a private key", private keys in browsers, the
 * allowed-origins rules of public keys and, when the organization blocks them, headless
 * browsers (public keys only: a private key belongs to the organization's own server).
 */
export function checkCaller(request: FastifyRequest, caller: Caller, client: ClientInfo = clientInfo(request)): void {
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
  checkPublicOrigin(org, client);
  if (org.security.block_headless) {
    const sign = headlessSign(client);
    if (sign !== undefined) throw new ApiError('headless_blocked', { details: { reason: sign } });
  }
}

/**
 * Send path step 2 in full: a public-key request first counts toward its organization's flood
 * guard (the only limit a request that fails before the template and CAPTCHA checks meets),
 * then the caller rules of `checkCaller`. Returns what the later steps need of the client.
 */
export async function admitCaller(request: FastifyRequest, caller: Caller, protection: Protection): Promise<ClientInfo> {
  await protection.limits.floodGuard(caller);
  const client = clientInfo(request);
  checkCaller(request, caller, client);
  return client;
}
