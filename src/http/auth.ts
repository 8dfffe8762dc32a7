import type { FastifyRequest } from 'fastify';
import { keyAuthenticates, requireReadScope, type Caller } from '../domain/caller.js';
import { ApiError } from '../errors/api-error.js';
import type { Store } from '../storage/store.js';
import { headerValue } from './headers.js';

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
 * The key a request named, once looked up, even when it did not authenticate (revoked, expired):
 * its organization is then known, and the request log (src/http/refused-requests.ts) records
 * the refusal under it with the key's id.
 */
const namedKeys = new WeakMap<FastifyRequest, { org_id: string; key_id: string }>();

export function keyNamedBy(request: FastifyRequest): { org_id: string; key_id: string } | undefined {
  return namedKeys.get(request);
}

/** The key value a request carries (header, else body), before any lookup. */
export function keyValueOf(request: FastifyRequest, body: BodyKeys = {}): string | undefined {
  return bearer(request) ?? nonEmpty(body.accessToken) ?? headerValue(request, 'x-mail-public-key') ?? nonEmpty(body.user_id);
}

/**
 * Resolves the key of a request (Authentication rule 2). A private key wins over a public one
 * when both are sent: it is the stronger credential, and servers that send both mean it.
 */
export async function authenticate(request: FastifyRequest, store: Store, body: BodyKeys = {}): Promise<Caller> {
  const privateValue = bearer(request) ?? nonEmpty(body.accessToken);
  const publicValue = headerValue(request, 'x-mail-public-key') ?? nonEmpty(body.user_id);
  const value = privateValue ?? publicValue;
  if (value === undefined)
    throw new ApiError('unauthorized', { message: 'No key was sent: use Authorization: Bearer sk_… or X-Mail-Public-Key.' });

  const key = await store.catalog.keyByValue(value);
  const now = store.clock.now();
  if (key !== undefined) namedKeys.set(request, { org_id: key.org_id, key_id: key.id });
  const claimed = value.startsWith('sk_') ? 'private' : value.startsWith('pk_') ? 'public' : undefined;
  // The cached record carries its expiry, so a grace period ends on time even while cached.
  if (key === undefined || !keyAuthenticates(key, now)) {
    if (claimed === 'private') throw new ApiError('invalid_private_key');
    if (claimed === 'public') throw new ApiError('invalid_public_key');
    throw new ApiError('unauthorized');
  }
  const org = await store.catalog.organization(key.org_id);
  if (org === undefined) throw new ApiError('unauthorized');
  // Not awaited: the answer never waits for bookkeeping, and a failed write is only logged.
  store.keyUse.note(key.id, now, (err) => request.log.warn({ err, key_id: key.id }, 'recording a key use failed'));
  return { org, key };
}

/**
 * authenticate for the routes that read (history, messages, templates, the test inbox): the one
 * place a `send_only` key is refused (403 forbidden, details.reason send_only_key), after the key
 * proved who calls and before the route's own key rules.
 */
export async function authenticateToRead(request: FastifyRequest, store: Store): Promise<Caller> {
  const caller = await authenticate(request, store);
  requireReadScope(caller);
  return caller;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}
