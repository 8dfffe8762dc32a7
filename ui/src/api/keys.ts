/** API keys in the admin API (src/admin/routes/keys.ts). Shapes generated (./shapes.ts). */
import { api, orgPath } from './client';
import type { Answer, Item, RequestBody } from './shapes.js';

type Rotate = '/organizations/{org}/keys/{keyId}/rotate';

/**
 * `hint` is a recognisable fragment (a private key's prefix); `public_key` the whole value of a
 * public key, null for private keys.
 */
export type ApiKey = Item<'/organizations/{org}/keys'>;

/** A key just created or rotated: `key` is its value, in this answer only; a rotation's also names the previous key. */
export type IssuedKey = Answer<'/organizations/{org}/keys', 'post'> & Partial<Pick<Answer<Rotate, 'post'>, 'previous_key'>>;

/** What a new key is made with: type, mode, and (issue 29) an optional name and a private key's scope. */
export type KeyCreate = RequestBody<'/organizations/{org}/keys', 'post'>;
/** A rename (null clears the name) or a scope change. */
export type KeyChanges = RequestBody<'/organizations/{org}/keys/{keyId}', 'patch'>;

export const keysApi = {
  list: (org: string) => api.get<Answer<'/organizations/{org}/keys', 'get'>>(orgPath(org, 'keys')),
  create: (org: string, body: KeyCreate) => api.post<IssuedKey>(orgPath(org, 'keys'), body),
  update: (org: string, id: string, body: KeyChanges) => api.patch<ApiKey>(orgPath(org, 'keys', id), body),
  rotate: (org: string, id: string, graceSeconds: number) =>
    api.post<Answer<Rotate, 'post'>>(orgPath(org, 'keys', id, 'rotate'), { grace_seconds: graceSeconds }),
  revoke: (org: string, id: string) => api.delete(orgPath(org, 'keys', id)),
};
