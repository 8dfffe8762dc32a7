/** API keys in the admin API (src/admin/routes/keys.ts). */
import { api, orgPath } from './client';

export interface ApiKey {
  id: string;
  type: 'public' | 'private';
  /** A recognisable fragment (a private key's prefix), safe to show. */
  hint: string;
  /** The whole value of a public key; null for private keys. */
  public_key: string | null;
  status: 'active' | 'revoked' | 'rotated';
  created_at: string;
  revoked_at: string | null;
  expires_at: string | null;
}

/** A key just created or rotated: `key` is its value, in this answer only. */
export interface IssuedKey extends ApiKey {
  key: string;
  previous_key?: { id: string; expires_at: string };
}

export const keysApi = {
  list: (org: string) => api.get<{ items: ApiKey[] }>(orgPath(org, 'keys')),
  create: (org: string, type: ApiKey['type']) => api.post<IssuedKey>(orgPath(org, 'keys'), { type }),
  rotate: (org: string, id: string, graceSeconds: number) => api.post<IssuedKey>(orgPath(org, 'keys', id, 'rotate'), { grace_seconds: graceSeconds }),
  revoke: (org: string, id: string) => api.delete(orgPath(org, 'keys', id)),
};
