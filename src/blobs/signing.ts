import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * HMAC-SHA256 over what a disk-store upload URL allows: which blob, how many bytes, what
 * content type, until when. Changing any of them in the URL breaks the signature.
 */
export function signUpload(secret: string, key: string, size: number, contentType: string, expiresAt: number): string {
  return createHmac('sha256', secret).update(`${key}\n${size}\n${contentType}\n${expiresAt}`).digest('base64url');
}

export function verifyUpload(
  secret: string,
  key: string,
  size: number,
  contentType: string,
  expiresAt: number,
  signature: string,
): boolean {
  const expected = Buffer.from(signUpload(secret, key, size, contentType, expiresAt));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
