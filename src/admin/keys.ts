import { ApiError } from '../errors/api-error.js';
import type { KeyType } from '../domain/types.js';
import type { IssuedKey } from '../storage/api-keys.js';
import type { Store } from '../storage/store.js';

export async function createKey(store: Store, orgId: string, type: KeyType, value?: string): Promise<IssuedKey> {
  const now = store.clock.now();
  return store.transaction(async (tx) => {
    if ((await tx.organizations.get(orgId)) === undefined) throw new ApiError('not_found', { message: `Organization "${orgId}" does not exist.` });
    if (value !== undefined && (await tx.keys.findByValue(value)) !== undefined) throw new ApiError('conflict', { message: 'That key value is already in use.' });
    return tx.keys.insert(orgId, type, now, value);
  });
}

/**
 * Replaces a key with a new one of the same type. The old key stops working at once
 * (`invalid_public_key` / `invalid_private_key`), as rotation after a leak requires.
 */
export async function rotateKey(store: Store, orgId: string, keyId: string): Promise<IssuedKey> {
  const now = store.clock.now();
  return store.transaction(async (tx) => {
    const key = await tx.keys.get(orgId, keyId);
    if (key === undefined) throw new ApiError('not_found', { message: `Key "${keyId}" does not exist in organization "${orgId}".` });
    if (key.status !== 'active') throw new ApiError('conflict', { message: `Key "${keyId}" is ${key.status}.` });
    await tx.keys.setStatus(key.id, 'rotated', now);
    return tx.keys.insert(orgId, key.type, now);
  });
}

export async function revokeKey(store: Store, orgId: string, keyId: string): Promise<void> {
  const key = await store.keys.get(orgId, keyId);
  if (key === undefined) throw new ApiError('not_found', { message: `Key "${keyId}" does not exist in organization "${orgId}".` });
  await store.keys.setStatus(key.id, 'revoked', store.clock.now());
}
