/** API keys in the admin API (src/admin/routes/keys.ts). Shapes generated (./shapes.ts). */
import { api, orgPath } from './client';
import type { Answer, Item } from './shapes.js';

type Rotate = '/organizations/{org}/keys/{keyId}/rotate';

/**
 * `hint` is a recognisable fragment (a private key's prefix); `public_key` the whole value of a
 * public key, null for private keys.
 */
export type ApiKey = Item<'/organizations/{org}/keys'>;

/** A key just created or rotated: `key` is its value, in this answer only; a rotation's also names the previous key. */
export type IssuedKey = Answer<'/organizations/{org}/keys', 'post'> & Partial<Pick<Answer<Rotate, 'post'>, 'previous_key'>>;

export const keysApi = {
  list: (org: string) => api.get<Answer<'/organizations/{org}/keys', 'get'>>(orgPath(org, 'keys')),
  create: (org: string, type: ApiKey['type'], mode: ApiKey['mode']) => api.post<IssuedKey>(orgPath(org, 'keys'), { type, mode }),
  rotate: (org: string, id: string, graceSeconds: number) =>
    api.post<Answer<Rotate, 'post'>>(orgPath(org, 'keys', id, 'rotate'), { grace_seconds: graceSeconds }),
  revoke: (org: string, id: string) => api.delete(orgPath(org, 'keys', id)),
};
