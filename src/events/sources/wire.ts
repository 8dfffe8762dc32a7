import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { IntakeMalformed, IntakeRejected } from '../types.js';

/**
 * Small helpers every webhook source shares: reading untrusted JSON without casts, comparing
 * secrets in constant time, and the freshness window of signed timestamps.
 */

/** Signed timestamps older (or further in the future) than this are refused: replay window. */
export const SIGNATURE_TOLERANCE_MS = 5 * 60_000;

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** JSON.parse of a verified body; unreadable JSON or a non-object is IntakeMalformed (400). */
export function parseJsonBody(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw new IntakeMalformed('The body is not JSON.');
  }
}

/**
 * Constant-time equality of two strings of any length: both sides are hashed first, so the
 * time says nothing about where they differ or how long the secret is.
 */
export function secretsEqual(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export function hmacSha256(key: Buffer | string, data: string | Buffer): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

/** A string setting of the service's `events` block, or IntakeRejected: nothing can verify without it. */
export function requiredSetting(settings: Readonly<Record<string, unknown>>, name: string): string {
  const value = settings[name];
  if (typeof value !== 'string' || value === '') throw new IntakeRejected(`events.${name} is not configured`);
  return value;
}

/** Seconds since the epoch (a string or number) → ms, or IntakeRejected when absent or not a number. */
export function signedSeconds(value: unknown): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,12}$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(n)) throw new IntakeRejected('missing or unreadable signature timestamp');
  return n * 1000;
}

export function checkFresh(atMs: number, now: number): void {
  if (Math.abs(now - atMs) > SIGNATURE_TOLERANCE_MS) throw new IntakeRejected('signature timestamp outside the 5-minute window');
}

/** The earliest event time believed: nothing we sent happened before 2000. */
export const EARLIEST_EVENT_MS = Date.UTC(2000, 0, 1);
/** How far past the receipt an event time may lie (clock skew) before it is not believed. */
export const LATEST_EVENT_AHEAD_MS = 24 * 3600_000;

/**
 * An event time as ms: an ISO date, or epoch seconds (a number; every source that sends numbers
 * documents seconds). Unreadable or outside 2000-01-01 .. `now` + 1 day, it is `fallback` (the
 * receipt time unless given): a signed body can still carry 1e300 or -5, and such a time would
 * overflow a bigint column or make toISOString throw when the message is read back.
 */
export function timeOf(value: unknown, now: number, fallback: number = now): number {
  let t = NaN;
  if (typeof value === 'number') t = Math.round(value * 1000);
  else if (typeof value === 'string' && value.length <= 64) t = Date.parse(value);
  return Number.isFinite(t) && t >= EARLIEST_EVENT_MS && t <= now + LATEST_EVENT_AHEAD_MS ? t : fallback;
}

/** Nesting deeper than this is not walked by `canonicalJson`: a fixed stack, whatever the input. */
const CANONICAL_MAX_DEPTH = 32;

/**
 * A stable text form of untrusted parsed JSON for digest keys: object keys sorted, and never
 * deeper than CANONICAL_MAX_DEPTH (below that a marker stands in). JSON.stringify recurses
 * without bound: a 400 KB body nested 200k levels deep overflows the stack (a 500).
 */
export function canonicalJson(value: unknown, depth = 0): string {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return JSON.stringify(value);
  if (depth >= CANONICAL_MAX_DEPTH) return '"\u2026"';
  if (Array.isArray(value)) return `[${value.map((v: unknown) => canonicalJson(v, depth + 1)).join(',')}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k], depth + 1)}`).join(',')}}`;
  }
  return 'null';
}

/**
 * A digest key for events whose provider gives no id of its own: same event, same key. `value` is
 * the raw body bytes when the body is the one event, else parsed JSON (digested in its bounded
 * canonical form).
 */
export function digestKey(prefix: string, value: unknown): string {
  const hash = createHash('sha256');
  if (Buffer.isBuffer(value)) hash.update(value);
  else hash.update(canonicalJson(value));
  return `${prefix}:${hash.digest('hex')}`;
}

export const lower = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim().toLowerCase() : null);

/** Our message id when the provider echoes it in metadata under `mailroom_message_id` or `message_id`. */
export function ourMessageId(metadata: unknown): string | undefined {
  if (!isRecord(metadata)) return undefined;
  // Case-insensitive: nodemailer capitalizes header names, so Postmark may echo the metadata
  // key of `X-Pm-Metadata-Mailroom_message_id` as `Mailroom_message_id`.
  const byName = new Map(Object.entries(metadata).map(([k, val]) => [k.toLowerCase(), val]));
  const v = byName.get('mailroom_message_id') ?? byName.get('message_id');
  return typeof v === 'string' && /^msg_[A-Za-z0-9_-]{1,60}$/.test(v) ? v : undefined;
}

export const trimmed = (v: unknown, max = 1000): string | null => (typeof v === 'string' && v !== '' ? v.slice(0, max) : null);
