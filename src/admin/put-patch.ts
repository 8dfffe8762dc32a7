import type { Static, TSchema } from '@sinclair/typebox';
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';
import { invalidFields } from './routes/common.js';

/**
 * The rules every admin resource's PUT and PATCH share (README, "Admin API"):
 * - PUT takes what GET returns: read-only fields are accepted and ignored, except an `id` that
 *   names another resource, which is refused (the body was meant for something else);
 * - a PUT lacking a required field is a 400 naming it, never a blank;
 * - PATCH names only what it changes; it is merged into the resource as GET shows it and the
 *   result must then be a valid PUT body.
 */

export type FieldProblem = { field: string; message: string };

/** Fields GET shows that no PUT can change (times, version, counts). */
export const READ_ONLY_FIELDS = ['id', 'version', 'created_at', 'updated_at', 'held'] as const;
type ReadOnly = (typeof READ_ONLY_FIELDS)[number];

/** The body without its read-only fields; an `id` other than the URL's is a 400 naming `id`. */
export function withoutReadOnly<T extends { id?: string }>(body: T, urlId: string): Omit<T, ReadOnly> {
  if (body.id !== undefined && body.id !== urlId) {
    throw invalidFields([{ field: 'id', message: `is "${body.id}" but the URL names "${urlId}"` }]);
  }
  return stripReadOnly(body);
}

/** The body without its read-only fields, whatever its `id` (a body with no URL to match, as a form's test). */
export function stripReadOnly<T extends object>(body: T): Omit<T, ReadOnly> {
  const rest: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const key of READ_ONLY_FIELDS) delete rest[key];
  return rest as Omit<T, ReadOnly>;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `patch` over `current`, one level deep: a field the patch names replaces the stored one,
 * except that an object merges its own fields into the stored object (so `security:
 * {block_headless: true}` keeps the other security settings). Anything deeper, and every
 * list, is replaced whole. `null` sets a nullable field to null.
 */
export function mergePatch(current: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    const stored = current[key];
    out[key] = isRecord(value) && isRecord(stored) ? { ...stored, ...value } : value;
  }
  return out;
}

/**
 * Checks a merged PATCH result against the PUT schema. Each half was valid on its own, so what
 * can fail here is a nested object the patch filled only in part (a `captcha` where none was
 * stored, an `smtp` block on an outbox service): its missing fields are named.
 */
export function checkMerged<T extends TSchema>(schema: T, value: unknown): Static<T> {
  if (Value.Check(schema, value)) return value;
  const byPath = new Map<string, string>();
  for (const e of closestErrors(Value.Errors(schema, value))) {
    const field = e.path.split('/').filter(Boolean).join('.') || 'body';
    if (byPath.has(field)) continue;
    byPath.set(field, e.type === ValueErrorType.ObjectRequiredProperty ? 'is required' : e.message.toLowerCase());
  }
  throw invalidFields([...byPath].map(([field, message]) => ({ field, message })));
}

/**
 * The errors, with a failed union (`captcha`: an object or null) replaced by the errors of its
 * closest branch, so `{site_key}` reads "captcha.secret_key is required", not "captcha is invalid".
 */
function closestErrors(errors: Iterable<ValueError>): ValueError[] {
  const out: ValueError[] = [];
  for (const e of errors) {
    // The branch of the value's own kind fails only inside it (an object missing a field); a
    // branch of another kind (null) fails at the union's own path.
    const best = e.errors
      .map((branch) => closestErrors(branch))
      .find((b) => b.length > 0 && b.every((inner) => inner.path !== e.path));
    if (e.type === ValueErrorType.Union && best !== undefined) out.push(...best);
    else out.push(e);
  }
  return out;
}

/** A 400 naming every required field the body lacks (`present` tells what the body holds). */
export function requireFields(present: (field: string) => boolean, required: readonly string[]): void {
  const missing = required.filter((f) => !present(f));
  if (missing.length > 0) throw invalidFields(missing.map((field) => ({ field, message: 'is required' })));
}
