import { ApiError } from '../errors/api-error.js';
import type { ApiKey, Organization } from './types.js';

/** Who is calling: the organization and the key that proved it. */
export interface Caller {
  org: Organization;
  key: ApiKey;
}

/**
 * Whether a key proves its organization at `now`: an active key, or a rotated one still inside
 * the grace period its rotation gave (both old and new keys work until `expires_at`).
 */
export function keyAuthenticates(key: ApiKey, now: number): boolean {
  if (key.status === 'active') return true;
  return key.status === 'rotated' && key.expires_at !== null && now < key.expires_at;
}

/**
 * Rules 3 and 4 for endpoints that take private keys: a public key is refused where a private
 * one is required, and a private key from a web page (an `origin`: the request's Origin header)
 * is refused unless the organization allows it.
 */
export function requirePrivateKey(caller: Caller, origin: string | undefined): void {
  if (caller.key.type !== 'private') throw new ApiError('private_key_required');
  checkPrivateKeyOrigin(caller, origin);
}

/** Rule 4 alone: a private key sent with an Origin header needs "allow private keys in browsers". */
export function checkPrivateKeyOrigin(caller: Caller, origin: string | undefined): void {
  if (caller.key.type === 'private' && origin !== undefined && !caller.org.security.allow_private_keys_in_browsers) {
    throw new ApiError('private_key_in_browser');
  }
}

/**
 * The read routes' rule (issue 29): a `send_only` private key sends (every send endpoint,
 * uploads, SMTP submission) but reads nothing — no history, message, timeline, template or test
 * inbox — so a leaked sending key on a web server does not also leak who was mailed what.
 */
export function requireReadScope(caller: Caller): void {
  if (caller.key.scope === 'send_only')
    throw new ApiError('forbidden', {
      message: 'This key can only send: it cannot read history, messages, templates or the test inbox.',
      details: { reason: 'send_only_key' },
    });
}
