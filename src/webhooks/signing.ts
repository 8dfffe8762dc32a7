import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com/): `whsec_` secrets, the
 * `v1,<base64 HMAC-SHA256>` signature of `<id>.<timestamp>.<body>`, and the request headers.
 */

const PREFIX = 'whsec_';
/** 32 bytes (256 bits) for the secrets we generate: the HMAC-SHA256 key size. */
const GENERATED_SECRET_BYTES = 32;
/** The floor for a secret someone brings: 24 bytes (192 bits). */
const MIN_SECRET_BYTES = 24;
/** Standard alphabet, padded: what receivers' libraries (standardwebhooks uses @stablelib/base64) decode. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function generateSecret(): string {
  return PREFIX + randomBytes(GENERATED_SECRET_BYTES).toString('base64');
}

/**
 * `whsec_` + canonical padded standard base64 of at least 24 bytes. Anything else is refused: Node's
 * decoder silently skips bad characters, so a sloppy secret would sign with a key the receiver's
 * library does not derive from the same text.
 */
export function isValidSecret(s: string): boolean {
  if (!s.startsWith(PREFIX)) return false;
  const encoded = s.slice(PREFIX.length);
  if (!BASE64.test(encoded)) return false;
  const bytes = Buffer.from(encoded, 'base64');
  // Re-encoding must give the same text: refuses non-zero trailing bits (two texts, one key).
  return bytes.length >= MIN_SECRET_BYTES && bytes.toString('base64') === encoded;
}

function secretKey(secret: string): Buffer {
  if (!isValidSecret(secret)) throw new Error('invalid webhook secret (expected whsec_<base64 of ≥ 24 bytes>)');
  return Buffer.from(secret.slice(PREFIX.length), 'base64');
}

/** One `v1,<sig>` per secret, space-separated, the current secret first (rotation sends two). */
export function signatureHeader(secrets: readonly string[], webhookId: string, timestampSeconds: number, body: string): string {
  if (secrets.length === 0) throw new Error('at least one webhook secret is needed to sign');
  const signed = `${webhookId}.${Math.floor(timestampSeconds)}.${body}`;
  return secrets
    .map((secret) => `v1,${createHmac('sha256', secretKey(secret)).update(signed, 'utf8').digest('base64')}`)
    .join(' ');
}

export const WEBHOOK_USER_AGENT = 'mailroom-webhooks/1';

/** The headers of one attempt: the timestamp is this attempt's, the id the same on every attempt. */
export function webhookHeaders(
  secrets: readonly string[],
  webhookId: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'webhook-id': webhookId,
    'webhook-timestamp': String(Math.floor(timestampSeconds)),
    'webhook-signature': signatureHeader(secrets, webhookId, timestampSeconds, body),
  };
}

/** The secret columns of an endpoint, as stored. */
export interface EndpointSecrets {
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: number | null;
}

/**
 * The secrets that sign a request made at `now`: the current one first, then the previous one
 * while a rotation's grace lasts (its expiry is exclusive: at the expiry instant it no longer signs).
 */
export function signingSecrets(endpoint: EndpointSecrets, now: number): string[] {
  const expires = endpoint.previous_secret_expires_at;
  return endpoint.previous_secret !== null && expires !== null && Number(expires) > now
    ? [endpoint.secret, endpoint.previous_secret]
    : [endpoint.secret];
}
