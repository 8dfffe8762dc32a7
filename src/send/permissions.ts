import { checkPrivateKeyOrigin, type Caller } from '../domain/caller.js';
import type { ClientInfo } from '../domain/client.js';
import { checkPublicOrigin } from '../domain/origin.js';
import { ApiError } from '../errors/api-error.js';
import { headlessSign } from '../protection/headless.js';
import type { Protection } from '../protection/index.js';

/**
 * Organization and key rules that come before anything else (send path step 2): suspended or
 * unverified organizations, "require a private key", private keys in browsers, the
 * allowed-origins rules of public keys and, when the organization blocks them, headless
 * browsers (public keys only: a private key belongs to the organization's own server).
 */
export function checkCaller(caller: Caller, client: ClientInfo): void {
  const { org, key } = caller;
  if (org.suspended) throw new ApiError('organization_suspended');
  if (!org.email_verified) throw new ApiError('email_not_verified');
  if (key.type === 'private') {
    checkPrivateKeyOrigin(caller, client.origin);
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
 * then the caller rules of `checkCaller`. `client` is what the route read of the request
 * (src/http/headers.ts `clientInfo`).
 */
export async function admitCaller(caller: Caller, client: ClientInfo, protection: Protection): Promise<void> {
  await protection.limits.floodGuard(caller);
  checkCaller(caller, client);
}
