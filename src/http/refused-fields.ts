import type { FastifyRequest } from 'fastify';
import type { ApiError } from '../errors/api-error.js';
import { headerValue } from './headers.js';

/**
 * What the request log keeps of a refused request (issue 29): an allowlist, never the rest of
 * the body. Never kept: a key (`Authorization`, `X-Mail-Public-Key`, `user_id`, `accessToken`),
 * a CAPTCHA token, attachment bytes, a template parameter's value. Kept:
 * - `template_id`, `service_id` (at most 64 characters each);
 * - `template_params`: each name (at most 50 names of 64 characters) with the shape of its value,
 *   never the value: `"string(12)"`, `"number"`, `"boolean"`, `"null"`, `"array(3)"`, `"object"`.
 *   Values are the customer's data (a contact form's message, an address); a 422's issues say
 *   which parameter failed and why, and the shape shows what was sent in its place;
 * - `attachments` (how many), `messages` (a batch's count);
 * - `origin` (200 characters), `user_agent` (120 characters);
 * - `details`: the error's details as the caller was answered them (a 422's issues, a 451's
 *   recipients), dropped first when the whole is over FIELDS_MAX_BYTES.
 * The JSON is then scrubbed of anything shaped like a key (SECRET_SHAPE), whatever field it came in.
 */

/** The most the `fields` JSON takes: a row stays under ~2.5 KB with its other columns. */
export const FIELDS_MAX_BYTES = 2048;
const MAX_PARAM_NAMES = 50;
const ID_CHARS = 64;

/** pk_/sk_ keys (live or test) and long base64url runs after them: 16 characters is below every key issued. */
const SECRET_SHAPE = /\b[ps]k_[A-Za-z0-9_-]{16,}/g;

/** Fields a route read from a body the JSON parser never saw (multipart: src/http/routes/send-form.ts). */
const noted = new WeakMap<FastifyRequest, Record<string, unknown>>();

/** A route whose body is not `request.body` hands its fields over for the log; the allowlist still applies. */
export function noteRequestFields(request: FastifyRequest, fields: Record<string, unknown>): void {
  noted.set(request, fields);
}

const cut = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n)}…` : s);

function shapeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `array(${v.length})`;
  if (typeof v === 'string') return `string(${v.length})`;
  return typeof v;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The allowlisted fields of the body, as described above. */
function bodyFields(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of ['template_id', 'service_id'] as const) {
    const v = body[name];
    if (typeof v === 'string' && v !== '') out[name] = cut(v, ID_CHARS);
  }
  const params = body.template_params;
  if (isRecord(params)) {
    const names = Object.keys(params);
    const shown: Record<string, string> = {};
    for (const n of names.slice(0, MAX_PARAM_NAMES)) shown[cut(n, ID_CHARS)] = shapeOf(params[n]);
    out.template_params = shown;
    if (names.length > MAX_PARAM_NAMES) out.template_params_count = names.length;
  }
  if (Array.isArray(body.attachments)) out.attachments = body.attachments.length;
  if (Array.isArray(body.messages)) out.messages = body.messages.length;
  return out;
}

/** Hides anything shaped like a key: a key pasted into template_id still never reaches the log. */
export const scrubSecrets = (text: string): string => text.replace(SECRET_SHAPE, '[key]');

/** The `fields` JSON of a refused request, at most FIELDS_MAX_BYTES. */
export function refusedFields(request: FastifyRequest, err: ApiError): string {
  const body = noted.get(request) ?? request.body;
  const fields: Record<string, unknown> = isRecord(body) ? bodyFields(body) : {};
  const origin = headerValue(request, 'origin');
  if (origin !== undefined) fields.origin = cut(origin, 200);
  const agent = headerValue(request, 'user-agent');
  if (agent !== undefined) fields.user_agent = cut(agent, 120);
  if (err.details !== undefined) fields.details = err.details;
  let text = scrubSecrets(JSON.stringify(fields));
  // Over the cap: the details go first, then the parameter names; what remains is small.
  for (const drop of ['details', 'template_params'] as const) {
    if (Buffer.byteLength(text) <= FIELDS_MAX_BYTES) return text;
    delete fields[drop];
    fields.truncated = true;
    text = scrubSecrets(JSON.stringify(fields));
  }
  return Buffer.byteLength(text) <= FIELDS_MAX_BYTES ? text : JSON.stringify({ truncated: true });
}
