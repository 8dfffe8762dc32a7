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

/** An ISO date (or epoch seconds) as ms; `fallback` (the receipt time) when unreadable. */
export function timeOf(value: unknown, fallback: number): number {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.round(value * 1000);
  if (typeof value === 'string') {
    const t = Date.parse(value);
    if (Number.isFinite(t)) return t;
  }
  return fallback;
}

/** A digest key for events whose provider gives no id of its own: same event bytes, same key. */
export function digestKey(prefix: string, value: unknown): string {
  return `${prefix}:${createHash('sha256').update(JSON.stringify(value)).digest('hex')}`;
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
