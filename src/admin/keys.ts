import { ApiError } from '../errors/api-error.js';
import type { ApiKey, KeyCreator, KeyMode, KeyScope, KeyType } from '../domain/types.js';
import type { IssuedKey, KeyDetails } from '../storage/api-keys.js';
import type { Store } from '../storage/store.js';

export async function createKey(
  store: Store,
  orgId: string,
  type: KeyType,
  value?: string,
  mode: KeyMode = 'live',
  details: KeyDetails = {},
): Promise<IssuedKey> {
  const now = store.clock.now();
  return store.transaction(async (tx) => {
    if ((await tx.organizations.get(orgId)) === undefined)
      throw new ApiError('not_found', { message: `Organization "${orgId}" does not exist.` });
    if (value !== undefined && (await tx.keys.findByValue(value)) !== undefined)
      throw new ApiError('conflict', { message: 'That key value is already in use.' });
    return tx.keys.insert(orgId, type, now, value, mode, details);
  });
}

/** Renames a key (null clears the name) or changes its scope; the key as it is now. */
export async function updateKey(
  store: Store,
  orgId: string,
  keyId: string,
  changes: { name?: string | null; scope?: KeyScope },
): Promise<ApiKey> {
  return store.transaction(async (tx) => {
    const key = await tx.keys.get(orgId, keyId);
    if (key === undefined)
      throw new ApiError('not_found', { message: `Key "${keyId}" does not exist in organization "${orgId}".` });
    await tx.keys.update(orgId, keyId, changes);
    return { ...key, ...changes };
  });
}

/** The longest grace period a rotation may give: long enough to redeploy, short enough to end. */
export const MAX_GRACE_SECONDS = 30 * 24 * 3600;

/** A rotation's result: the new key, and the old one as it is now (with its `expires_at`). */
export interface Rotation extends IssuedKey {
  previous: ApiKey & { expires_at: number };
}

/**
 * Replaces a key with a new one of the same type, mode, name and scope (a test key's successor
 * is a test key; a send_only key's is send_only); its `created_by` is who rotated (`rotatedBy`).
 * By default the old key stops working at once (`invalid_public_key` / `invalid_private_key`),
 * as rotation after a leak requires. With
 * `graceSeconds` both keys work until that many seconds have passed, so clients can be moved
 * to the new key without refused requests; revoking the old key ends the grace at once.
 */
export async function rotateKey(
  store: Store,
  orgId: string,
  keyId: string,
  graceSeconds = 0,
  rotatedBy: KeyCreator = 'admin',
): Promise<Rotation> {
  if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_GRACE_SECONDS) {
    const message = `must be a whole number of seconds from 0 to ${MAX_GRACE_SECONDS}`;
    throw new ApiError('invalid_body', {
      message: `grace_seconds ${message}.`,
      details: { fields: [{ field: 'grace_seconds', message }] },
    });
  }
  const now = store.clock.now();
  return store.transaction(async (tx) => {
    const key = await tx.keys.get(orgId, keyId);
    if (key === undefined)
      throw new ApiError('not_found', { message: `Key "${keyId}" does not exist in organization "${orgId}".` });
    if (key.status !== 'active') throw new ApiError('conflict', { message: `Key "${keyId}" is ${key.status}.` });
    const expiresAt = now + graceSeconds * 1000;
    await tx.keys.setStatus(key.id, 'rotated', now, expiresAt);
    const issued = await tx.keys.insert(orgId, key.type, now, undefined, key.mode, {
      name: key.name,
      scope: key.scope,
      createdBy: rotatedBy,
    });
    return { ...issued, previous: { ...key, status: 'rotated', revoked_at: now, expires_at: expiresAt } };
  });
}

export async function revokeKey(store: Store, orgId: string, keyId: string): Promise<void> {
  const key = await store.keys.get(orgId, keyId);
  if (key === undefined)
    throw new ApiError('not_found', { message: `Key "${keyId}" does not exist in organization "${orgId}".` });
  await store.keys.setStatus(key.id, 'revoked', store.clock.now());
}
