import { createHash, randomFillSync, timingSafeEqual } from 'node:crypto';
import type { KeyMode } from './types.js';

/**
 * Random bytes are drawn from the CSPRNG 8 KiB at a time and handed out once each, in order:
 * one randomBytes call per token cost ~10 µs (two per send, 20 µs of ~370), a slice of the
 * pool well under 1 µs. Node's own randomUUID caches entropy the same way.
 */
const POOL_BYTES = 8192;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

function takeRandom(bytes: number): Buffer {
  if (bytes > POOL_BYTES) return randomFillSync(Buffer.alloc(bytes));
  if (poolOffset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const out = pool.subarray(poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return out;
}

/** Random URL-safe token: `bytes` of entropy, base64url (4 characters per 3 bytes). */
export function randomToken(bytes: number): string {
  return takeRandom(bytes).toString('base64url');
}

/** Ids are opaque and unguessable: 16 random bytes (128 bits) behind a readable prefix. */
export function newId(prefix: string): string {
  return `${prefix}_${randomToken(16)}`;
}

/**
 * Like newId, and the ids of one process sort by creation time: 12 hex digits of the
 * millisecond clock lead the 128 random bits. Rows keyed by such ids land at the right edge of
 * their B-trees instead of on a random page each: on SQLite the message, content, recipient
 * and event inserts of a send cost ~125 µs with random ids and ~70 µs with these (20,000
 * sends in batches of 16, both rising with table size for random ids only).
 */
export function newSortableId(prefix: string, nowMs: number): string {
  return `${prefix}_${Math.max(0, Math.floor(nowMs)).toString(16).padStart(12, '0')}${randomToken(16)}`;
}

/**
 * Public keys: 18 bytes (144 bits); private keys: 32 bytes (256 bits). Test keys carry `test_`
 * after the type's prefix (`pk_test_…`, `sk_test_…`) with the same entropy.
 */
export function newApiKey(type: 'public' | 'private', mode: KeyMode = 'live'): string {
  const infix = mode === 'test' ? 'test_' : '';
  return type === 'public' ? `pk_${infix}${randomToken(18)}` : `sk_${infix}${randomToken(32)}`;
}

/**
 * Keys and status tokens are stored only as SHA-256 digests. They are long random strings, not
 * passwords, so a slow hash adds nothing but latency on every request.
 */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Constant-time comparison of two hex digests. */
export function digestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * `sk_…9f2c`; a test key's hint keeps its `test_` (`sk_test_…9f2c`). Asked by the key's mode,
 * not its prefix: a live key may be named `sk_test_…` (config files pin such names).
 */
export function keyHint(key: string, mode: KeyMode = 'live'): string {
  const prefix = mode === 'test' && /^[ps]k_test_/.test(key) ? key.slice(0, 8) : key.slice(0, 3);
  return `${prefix}…${key.slice(-4)}`;
}

/**
 * Whether `id` could name a stored message: ids are a prefix and hex or base64url characters,
 * at most 64 of them (the path's limit). Anything else cannot exist, so it is looked up
 * nowhere; PostgreSQL would even refuse a NUL in a text parameter and answer 500.
 */
export function isPlausibleMessageId(id: string): boolean {
  return /^[A-Za-z0-9_-]{1,64}$/.test(id);
}
