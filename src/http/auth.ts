import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import type { ApiKey, Organization } from '../domain/types.js';
import type { Store } from '../storage/store.js';
import { headerValue } from './headers.js';

/** Who is calling: the organization and the key that proved it. */
export interface Caller {
  org: Organization;
  key: ApiKey;
}

/** Keys that may also arrive in the body (EmailJS's SDKs put them there). */
export interface BodyKeys {
  user_id?: string | undefined;
  accessToken?: string | undefined;
}

function bearer(request: FastifyRequest): string | undefined {
  const auth = headerValue(request, 'authorization');
  if (auth === undefined) return undefined;
  const m = /^Bearer\s+(\S+)$/i.exec(auth);
  return m?.[1];
}

/**
 * Resolves the key of a request (Authentication rule 2). A private key wins over a public one
 * when both are sent: it is the stronger credential, and servers that send both mean it.
 */
export async function authenticate(request: FastifyRequest, store: Store, body: BodyKeys = {}): Promise<Caller> {
  const privateValue = bearer(request) ?? nonEmpty(body.accessToken);
  const publicValue = headerValue(request, 'x-mail-public-key') ?? nonEmpty(body.user_id);
  const value = privateValue ?? publicValue;
  if (value === undefined) throw new ApiError('unauthorized', { message: 'No key was sent: use Authorization: Bearer sk_… or X-Mail-Public-Key.' });

  const key = await store.catalog.keyByValue(value);
  const claimed = value.startsWith('sk_') ? 'private' : value.startsWith('pk_') ? 'public' : undefined;
  // The cached record carries its expiry, so a grace period ends on time even while cached.
  if (key === undefined || !keyAuthenticates(key, store.clock.now())) {
    if (claimed === 'private') throw new ApiError('invalid_private_key');
    if (claimed === 'public') throw new ApiError('invalid_public_key');
    throw new ApiError('unauthorized');
  }
  const org = await store.catalog.organization(key.org_id);
  if (org === undefined) throw new ApiError('unauthorized');
  return { org, key };
}

/**
 * Whether a key proves its organization at `now`: an active key, or a rotated one still inside
 * the grace period its rotation gave (both old and new keys work until `expires_at`).
 */
export function keyAuthenticates(key: ApiKey, now: number): boolean {
  if (key.status === 'active') return true;
  return key.status === 'rotated' && key.expires_at !== null && now < key.expires_at;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

/**
 * Rules 3 and 4 for endpoints that take private keys: a public key is refused where a private
 * one is required, and a private key from a web page (Origin header) is refused unless the
 * organization allows it.
 */
export function requirePrivateKey(request: FastifyRequest, caller: Caller): void {
  if (caller.key.type !== 'private') throw new ApiError('private_key_required');
  checkPrivateKeyOrigin(request, caller);
}

export function checkPrivateKeyOrigin(request: FastifyRequest, caller: Caller): void {
  if (caller.key.type === 'private' && headerValue(request, 'origin') !== undefined && !caller.org.security.allow_private_keys_in_browsers) {
    throw new ApiError('private_key_in_browser');
  }
}
