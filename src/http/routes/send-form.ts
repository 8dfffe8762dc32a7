import { createHash } from 'node:crypto';
import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { PLAN_ATTACHMENT_LIMIT } from '../../attachments/policy.js';
import { ApiError } from '../../errors/api-error.js';
import { acceptSend, checkParamsSize, type SendDeps } from '../../send/accept.js';
import { idempotencyKeyOf, requestDigest } from '../../send/idempotency-key.js';
import { admitCaller } from '../../send/permissions.js';
import type { FileAttachment, SendInput } from '../../send/request.js';
import type { App } from '../app-types.js';
import { authenticate } from '../auth.js';
import { responses } from '../schemas.js';
import { jsonAccepted, legacyAccepted, SEND_ERRORS, sendStored, wantsJson } from './send.js';

/** Spec, Send form fields: these names are the request's own; every other text field is a parameter. */
const RESERVED = new Set(['service_id', 'template_id', 'user_id', 'accessToken', 'cf-turnstile-response', 'turnstile_token', 'turnstile_key']);
const MAX_FILES = 20;
/** One text field: a textarea of 1 MB is far beyond any form; template_params are capped at 256 kB anyway. */
const MAX_FIELD_BYTES = 1024 * 1024;

interface ParsedForm {
  reserved: Map<string, string>;
  params: Record<string, string>;
  files: FileAttachment[];
  /** Field names and file digests, in order: what makes two submissions "the same". */
  digestSource: Array<[string, string]>;
}

/**
 * Reads a multipart send as a stream, part by part, each under its limit, so a large upload
 * never sits whole in memory before it is refused. Reserved fields: the last occurrence wins
 * (EmailJS's browser SDK appends its own after the form's). A parameter sent more than once
 * (a checkbox group) becomes one string of its values joined by ", ", which reads naturally in
 * an email and passes a `string` parameter schema. File inputs left empty (no name, no bytes,
 * as browsers send them) are skipped.
 */
async function parseForm(request: FastifyRequest, maxFileBytes: number): Promise<ParsedForm> {
  const form: ParsedForm = { reserved: new Map(), params: {}, files: [], digestSource: [] };
  const repeated = new Map<string, string[]>();
  try {
    for await (const part of request.parts({ limits: { fileSize: maxFileBytes, files: MAX_FILES + 1, fieldSize: MAX_FIELD_BYTES, fields: 1000, parts: 1100 } })) {
      if (part.type === 'file') {
        const bytes = await part.toBuffer();
        if (part.filename === '' && bytes.length === 0) continue;
        if (form.files.length >= MAX_FILES) throw new ApiError('invalid_body', { message: `At most ${MAX_FILES} files per send.`, details: { fields: [{ field: part.fieldname, message: `more than ${MAX_FILES} files` }] } });
        form.files.push({ filename: part.filename || part.fieldname, content_type: part.mimetype, bytes });
        form.digestSource.push([`file:${part.fieldname}:${part.filename}`, createHash('sha256').update(bytes).digest('hex')]);
        continue;
      }
      const value = typeof part.value === 'string' ? part.value : String(part.value ?? '');
      // As in JSON bodies (src/http/json-body.ts): NUL means nothing in an email, and
      // PostgreSQL's text type cannot hold it.
      if (value.includes('\u0000') || part.fieldname.includes('\u0000')) {
        const name = part.fieldname.replace(/\u0000/g, '\\u0000');
        throw new ApiError('invalid_body', { message: `${name} contains a NUL character.`, details: { fields: [{ field: name, message: 'contains a NUL character' }] } });
      }
      form.digestSource.push([part.fieldname, value]);
      if (RESERVED.has(part.fieldname)) {
        form.reserved.set(part.fieldname, value);
      } else {
        const list = repeated.get(part.fieldname) ?? [];
        list.push(value);
        repeated.set(part.fieldname, list);
      }
    }
  } catch (err) {
    throw formError(err);
  }
  for (const [name, values] of repeated) form.params[name] = values.join(', ');
  return form;
}

/** @fastify/multipart and busboy errors → the spec's codes (never a 500 for a malformed body). */
function formError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const code = (err as { code?: string }).code ?? '';
  if (code === 'FST_REQ_FILE_TOO_LARGE') return new ApiError('attachment_too_large', { message: 'A file is larger than the plan allows per message.' });
  if (code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new ApiError('payload_too_large', { message: 'The form has too many or too large parts.' });
  }
  return new ApiError('bad_request', { message: `The multipart body could not be read: ${(err as Error).message ?? 'malformed'}.` });
}

function field(form: ParsedForm, name: string, max: number): string | undefined {
  const v = form.reserved.get(name);
  if (v === undefined || v === '') return undefined;
  if (v.length > max) throw new ApiError('invalid_body', { message: `${name} is longer than ${max} characters.`, details: { fields: [{ field: name, message: `must be at most ${max} characters` }] } });
  return v;
}

/** POST /v1/send-form and its legacy alias POST /api/v1.0/email/send-form (multipart/form-data). */
export function registerSendForm(app: App, deps: SendDeps): void {
  const maxFileBytes = Math.max(...Object.values(PLAN_ATTACHMENT_LIMIT));
  app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    await scope.register(multipart, { throwFileSizeLimit: true });
    for (const [url, legacy] of [['/v1/send-form', false], ['/api/v1.0/email/send-form', true]] as const) {
      scope.post(url, {
        schema: {
          tags: ['send'],
          summary: legacy ? 'Legacy-compatible alias of POST /v1/send-form' : 'Send one email from multipart/form-data',
          description: 'Reserved fields: service_id, template_id, user_id, accessToken, cf-turnstile-response, turnstile_token, turnstile_key. Every other text field is a template parameter (repeated names joined with ", "); every file field is an attachment.',
          consumes: ['multipart/form-data'],
          security: [{ publicKey: [] }, { privateKey: [] }],
          response: responses(legacy ? { 200: Type.String({ description: 'OK' }), 202: Type.Ref('SendAccepted') } : { 202: Type.Ref('SendAccepted') }, SEND_ERRORS),
        },
      }, async (request, reply) => {
        if (!request.isMultipart()) throw new ApiError('bad_request', { message: 'This endpoint takes multipart/form-data.' });
        const form = await parseForm(request, maxFileBytes);
        checkParamsSize(form.params);
        const templateId = field(form, 'template_id', 64);
        if (templateId === undefined) throw new ApiError('invalid_body', { message: 'template_id is required.', details: { fields: [{ field: 'template_id', message: 'is required' }] } });
        const turnstileKey = field(form, 'turnstile_key', 10);
        if (turnstileKey !== undefined && turnstileKey !== 'org' && turnstileKey !== 'mail') {
          throw new ApiError('invalid_body', { message: 'turnstile_key must be org or mail.', details: { fields: [{ field: 'turnstile_key', message: 'must be org or mail' }] } });
        }
        const input: SendInput = {
          service_id: field(form, 'service_id', 64),
          template_id: templateId,
          template_params: form.params,
          params_source: 'form',
          turnstile_token: field(form, 'turnstile_token', 4096) ?? field(form, 'cf-turnstile-response', 4096),
          turnstile_key: turnstileKey,
          attachments: form.files,
        };
        const caller = await authenticate(request, deps.store, { user_id: field(form, 'user_id', 200), accessToken: field(form, 'accessToken', 300) });
        const client = await admitCaller(request, caller, deps.protection);
        const idempotencyKey = idempotencyKeyOf(request.headers['idempotency-key']);
        const outcome = await acceptSend(deps, {
          caller,
          client,
          input,
          idempotency: idempotencyKey === undefined ? undefined : { key: idempotencyKey, digest: requestDigest(url, form.digestSource) },
          respond: legacy && !wantsJson(request) ? legacyAccepted : jsonAccepted,
        });
        return sendStored(reply, outcome.response);
      });
    }
  });
}
