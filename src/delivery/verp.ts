import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { canonicalAddress } from '../domain/addresses.js';
import { randomToken } from '../domain/ids.js';

/**
 * VERP bounce addresses (issue 12, plain SMTP relays). A service with `bounce_domain` sends
 * with the envelope sender `bounce+<token>@<bounce_domain>`; a bounce or feedback report comes
 * back to that address and the token says which message and which recipient it is about.
 *
 * The token is lowercase base32 (MTAs may fold the case of a local part) of:
 *   message id (22 bytes: 6 of the id's millisecond clock + its 16 random bytes; 16 for an id
 *   without the clock) ‖ 4 bytes of SHA-256(recipient, lower-cased) ‖ 8 bytes of
 *   HMAC-SHA256(secret, "mailroom-verp-1" ‖ the bytes before).
 * Naming the recipient by a digest rather than its place in the message keeps the token valid
 * whatever the list looks like on a retry; the MAC means a forged bounce cannot name a message
 * or recipient it never got a token for (64 bits, guessed online one SMTP transaction at a time).
 * 55 characters for our ids: with `bounce+` the local part stays within SMTP's 64.
 */

export const VERP_LOCAL = 'bounce';
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const MAC_BYTES = 8;
const RCPT_BYTES = 4;
const CONTEXT = Buffer.from('mailroom-verp-1');
const SORTABLE_ID = /^msg_([0-9a-f]{12})([A-Za-z0-9_-]{22})$/;
const PLAIN_ID = /^msg_([A-Za-z0-9_-]{22})$/;

export function base32(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** Undefined for anything but our alphabet (case-insensitively) or non-zero padding bits. */
export function unbase32(text: string): Buffer | undefined {
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of text.toLowerCase()) {
    const v = ALPHABET.indexOf(ch);
    if (v < 0) return undefined;
    value = (value << 5) | v;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
    value &= (1 << bits) - 1;
  }
  if (value !== 0) return undefined;
  return Buffer.from(bytes);
}

function idBytes(messageId: string): Buffer | undefined {
  const [, time, random] = SORTABLE_ID.exec(messageId) ?? [];
  if (time !== undefined && random !== undefined)
    return Buffer.concat([Buffer.from(time, 'hex'), Buffer.from(random, 'base64url')]);
  const [, plain] = PLAIN_ID.exec(messageId) ?? [];
  return plain === undefined ? undefined : Buffer.from(plain, 'base64url');
}

function idFromBytes(bytes: Buffer): string | undefined {
  if (bytes.length === 22) return `msg_${bytes.subarray(0, 6).toString('hex')}${bytes.subarray(6).toString('base64url')}`;
  if (bytes.length === 16) return `msg_${bytes.toString('base64url')}`;
  return undefined;
}

/**
 * The 4 bytes naming a recipient in a token, of its canonicalAddress (the token must not depend
 * on spelling: a bounce may name `zoë@exämple.com` by either form of the domain). ASCII
 * addresses hash as before (trimmed, lower-cased), so tokens already out still match.
 */
export function recipientDigest(recipient: string): Buffer {
  return createHash('sha256').update(canonicalAddress(recipient)).digest().subarray(0, RCPT_BYTES);
}

const mac = (secret: string, body: Buffer) =>
  createHmac('sha256', secret).update(CONTEXT).update(body).digest().subarray(0, MAC_BYTES);

/** The token for one message and recipient; undefined when the id is not one of ours (no VERP then). */
export function verpToken(secret: string, messageId: string, recipient: string): string | undefined {
  const id = idBytes(messageId);
  if (id === undefined) return undefined;
  const body = Buffer.concat([id, recipientDigest(recipient)]);
  return base32(Buffer.concat([body, mac(secret, body)]));
}

export function verpAddress(secret: string, bounceDomain: string, messageId: string, recipient: string): string | undefined {
  const token = verpToken(secret, messageId, recipient);
  return token === undefined ? undefined : `${VERP_LOCAL}+${token}@${bounceDomain.toLowerCase()}`;
}

export interface VerpTarget {
  messageId: string;
  /** 4 bytes; compare with recipientDigest(address) to know whether an address is the token's. */
  recipientDigest: Buffer;
}

/** The token's message and recipient when its MAC holds (compared in constant time); undefined otherwise. */
export function openVerpToken(secret: string, token: string): VerpTarget | undefined {
  const bytes = unbase32(token);
  if (bytes === undefined || bytes.length <= MAC_BYTES + RCPT_BYTES) return undefined;
  const body = bytes.subarray(0, bytes.length - MAC_BYTES);
  const given = bytes.subarray(bytes.length - MAC_BYTES);
  if (!timingSafeEqual(given, mac(secret, body))) return undefined;
  const messageId = idFromBytes(body.subarray(0, body.length - RCPT_BYTES));
  if (messageId === undefined) return undefined;
  return { messageId, recipientDigest: Buffer.from(body.subarray(body.length - RCPT_BYTES)) };
}

/** `bounce+<token>@domain` → the token and domain (lower-cased); undefined for any other address. */
export function splitVerpAddress(address: string): { token: string; domain: string } | undefined {
  const [, token, domain] = /^bounce\+([a-z2-7]{20,80})@([a-z0-9.-]+)$/i.exec(address.trim()) ?? [];
  return token === undefined || domain === undefined ? undefined : { token: token.toLowerCase(), domain: domain.toLowerCase() };
}

/**
 * The MAC key: MAILROOM_VERP_SECRET when set (the same on every host that sends or receives:
 * required when API and workers run on different machines), otherwise a secret made once in
 * `<data_dir>/verp-secret` and read back on every start, so a restart keeps the tokens of mail
 * in flight valid (bounces come back days later). Read from the environment here rather than
 * passed down: transports are built in worker threads from a context of plain data, and the
 * environment is the one thing every thread and process of the host shares; loadConfig has
 * already refused a bad value at start.
 */
export function verpSecret(dataDir: string, env: Readonly<Record<string, string | undefined>> = process.env): string {
  const fromEnv = env.MAILROOM_VERP_SECRET?.trim();
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'verp-secret');
  try {
    fs.writeFileSync(file, randomToken(32), { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if (!(err instanceof Error && 'code' in err && err.code === 'EEXIST')) throw err;
  }
  return fs.readFileSync(file, 'utf8').trim();
}
