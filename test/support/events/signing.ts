import { createHmac, randomBytes } from 'node:crypto';

/** The providers' request signing as they document it, with secrets made here. */

export const basic = (user: string, pass: string): Record<string, string> => ({
  authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`,
});

/** Mailgun's signature object: HMAC-SHA256(signing key, timestamp + token), hex. */
export function mailgunSignature(
  signingKey: string,
  nowMs: number,
  token = randomBytes(25).toString('hex'),
): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  return {
    timestamp,
    token,
    signature: createHmac('sha256', signingKey)
      .update(timestamp + token)
      .digest('hex'),
  };
}

export const newSvixSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

/** Svix's headers for `body`: v1 HMAC-SHA256 over id.timestamp.body with the key after whsec_. */
export function svixHeaders(
  secret: string,
  body: string,
  nowMs: number,
  id = `msg_${randomBytes(12).toString('hex')}`,
): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const sig = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'svix-id': id, 'svix-timestamp': timestamp, 'svix-signature': `v1,${sig}` };
}
