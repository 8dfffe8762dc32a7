import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { finished, type Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type { FileAttachment } from '../attachments/input.js';
import { ApiError } from '../errors/api-error.js';
import { bodyTooLarge } from './body-limits.js';
import { closeAfterAnswer } from '../errors/lingering-close.js';

/** Spec, Send form fields: these names are the request's own; every other text field is a parameter. */
const RESERVED = new Set([
  'service_id',
  'template_id',
  'user_id',
  'accessToken',
  'cf-turnstile-response',
  'turnstile_token',
  'turnstile_key',
]);
const MAX_FILES = 20;
/** One text field: a textarea of 1 MB is far beyond any form; template_params are capped at 256 kB anyway. */
const MAX_FIELD_BYTES = 1024 * 1024;

export interface ParsedForm {
  reserved: Map<string, string>;
  params: Record<string, string>;
  files: FileAttachment[];
  /** Field names and file digests, in order: what makes two submissions "the same". */
  digestSource: Array<[string, string]>;
}

export interface FormLimits {
  /** MAILROOM_BODY_LIMIT_BYTES: the whole body, counted as it arrives (a chunked body declares nothing). */
  bodyBytes: number;
  /**
   * Attachment bytes this send may carry in all: the caller's plan allowance, or the largest plan's while the caller is unknown.
   */
  fileBytes: number;
}

/**
 * Reads a multipart send as a stream, part by part, each under its limit, so a large upload
 * never sits whole in memory, and is not read further than needed to refuse it:
 * - the body stops being read once it passes the body limit (413 payload_too_large);
 * - files stop being read once they pass the attachment allowance (413 attachment_too_large);
 *   a caller without any allowance is refused at the first file byte (403, as at acceptance).
 *
 * Reserved fields: the last occurrence wins (EmailJS's browser SDK appends its own after the
 * form's). A parameter sent more than once (a checkbox group) becomes one string of its values
 * joined by ", ", which reads naturally in an email and passes a `string` parameter schema. File
 * inputs left empty (no name, no bytes, as browsers send them) are skipped.
 *
 * An error before the end of the body leaves bytes on the connection that the next request on
 * it would be read behind: see settleUnread.
 */
export async function readForm(request: FastifyRequest, limits: FormLimits): Promise<ParsedForm> {
  const raw = request.raw;
  const counter = countBody(raw, limits.bodyBytes);
  try {
    return await readParts(request, limits, counter.aborted);
  } catch (err) {
    throw settleUnread(raw, counter, formError(err));
  } finally {
    if (raw.complete) counter.stop();
  }
}

async function readParts(request: FastifyRequest, limits: FormLimits, aborted: Promise<never>): Promise<ParsedForm> {
  const form: ParsedForm = { reserved: new Map(), params: {}, files: [], digestSource: [] };
  const repeated = new Map<string, string[]>();
  let fileBytes = 0;
  // busboy's own file limit is left at the body limit: the allowance below is a total over
  // all files, checked as each chunk arrives.
  const parts = request.parts({
    limits: { fileSize: limits.bodyBytes, files: MAX_FILES + 1, fieldSize: MAX_FIELD_BYTES, fields: 1000, parts: 1100 },
  });
  const iterator = parts[Symbol.asyncIterator]();
  for (;;) {
    // The body counter ends the wait when the body passes the limit between two parts.
    const step = await Promise.race([iterator.next(), aborted]);
    if (step.done === true) break;
    const part = step.value;
    if (part.type === 'file') {
      const bytes = await Promise.race([readFile(part.file, limits.fileBytes - fileBytes), aborted]).catch((err: unknown) => {
        throw err instanceof ApiError && err.code === 'attachment_too_large' ? overAllowance(limits.fileBytes) : err;
      });
      if (part.filename === '' && bytes.length === 0) continue;
      if (form.files.length >= MAX_FILES)
        throw new ApiError('invalid_body', {
          message: `At most ${MAX_FILES} files per send.`,
          details: { fields: [{ field: part.fieldname, message: `more than ${MAX_FILES} files` }] },
        });
      fileBytes += bytes.length;
      form.files.push({ filename: part.filename || part.fieldname, content_type: part.mimetype, bytes });
      form.digestSource.push([`file:${part.fieldname}:${part.filename}`, createHash('sha256').update(bytes).digest('hex')]);
      continue;
    }
    if (part.valueTruncated) {
      throw new ApiError('payload_too_large', {
        message: `${part.fieldname} is longer than ${MAX_FIELD_BYTES} bytes.`,
        details: { fields: [{ field: part.fieldname, message: `must be at most ${MAX_FIELD_BYTES} bytes` }] },
      });
    }
    const value = typeof part.value === 'string' ? part.value : String(part.value ?? '');
    // As in JSON bodies (src/http/json-body.ts): NUL means nothing in an email, and
    // PostgreSQL's text type cannot hold it.
    if (value.includes('\u0000') || part.fieldname.includes('\u0000')) {
      const name = part.fieldname.replaceAll('\u0000', '\\u0000');
      throw new ApiError('invalid_body', {
        message: `${name} contains a NUL character.`,
        details: { fields: [{ field: name, message: 'contains a NUL character' }] },
      });
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
  for (const [name, values] of repeated) form.params[name] = values.join(', ');
  return form;
}

/** As storeAttachments says it at acceptance: no allowance at all is 403, a total over it 413. */
function overAllowance(allowance: number): ApiError {
  if (allowance === 0)
    return new ApiError('attachments_not_allowed', {
      message: 'The plan has no attachment allowance.',
      details: { reason: 'plan' },
    });
  return new ApiError('attachment_too_large', {
    message: `The attachments are larger than the ${allowance} bytes the plan allows per message.`,
    details: { limit: allowance },
  });
}

/**
 * A file part's bytes, refused the moment they pass `allowance` (the rest is never read).
 *
 * The part may be handed over already settled. When the caller's key is looked up before the
 * form is read (a real round trip on PostgreSQL, next to none on SQLite), the whole body has
 * arrived by then, and busboy parses all of it in one go, before the iterator's promise hands
 * the part over: a truncated form has destroyed the file stream with its error by the time it
 * gets here, and its 'error' and 'end' are never emitted again. Listening for them alone held
 * such a request unanswered for good (issue 25 §5: 88 of 4,320 fuzzed forms on PostgreSQL).
 * finished() reports a stream that is already ended, errored or destroyed as well as one that
 * finishes later.
 */
function readFile(file: Readable, allowance: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      chunks.push(chunk);
      if (size <= allowance) return;
      done();
      file.pause();
      reject(new ApiError('attachment_too_large', { message: 'The attachments are larger than the plan allows per message.' }));
    };
    const stopWatching = finished(file, (err) => {
      done();
      if (err === undefined || err === null) resolve(Buffer.concat(chunks, size));
      else reject(err);
    });
    const done = () => {
      file.off('data', onData);
      stopWatching();
    };
    file.on('data', onData);
  });
}

interface BodyCounter {
  /** Rejects with 413 once the body passes the limit while it is being parsed. */
  aborted: Promise<never>;
  /** Read and discard the rest; a body that passes the limit meanwhile loses its connection (closed after the answer). */
  drain(): void;
  stop(): void;
}

/** Counts the body's bytes as Node reads them from the socket, beside the multipart parser. */
function countBody(raw: IncomingMessage, limit: number): BodyCounter {
  let received = 0;
  let draining = false;
  let abort: (err: ApiError) => void = () => undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    abort = reject;
  });
  // Nobody awaits it when the body is within the limit.
  aborted.catch(() => undefined);
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received <= limit) return;
    if (draining) {
      // The connection cannot be kept: it ends once the answer is out, and lingers rather than
      // resetting a client that is still sending (src/errors/lingering-close.ts).
      raw.off('data', onData);
      closeAfterAnswer(raw.socket);
      return;
    }
    raw.unpipe();
    raw.pause();
    raw.off('data', onData);
    abort(bodyTooLarge(limit));
  };
  raw.on('data', onData);
  return {
    aborted,
    drain: () => {
      draining = true;
      raw.resume();
    },
    stop: () => raw.off('data', onData),
  };
}

/**
 * A refusal before the end of the body answers at once; the unread rest must not stay on the
 * keep-alive connection, where the next request would wait behind it unanswered. Refusals for
 * size stop reading and close the connection after the answer (reading on is what they refuse);
 * any other refusal drains the rest, which the body limit bounds, and keeps the connection.
 */
function settleUnread(raw: IncomingMessage, counter: BodyCounter, err: ApiError): ApiError {
  if (raw.complete) return err;
  raw.unpipe();
  if (err.code === 'payload_too_large' || err.code === 'attachment_too_large') {
    counter.stop();
    raw.pause();
    return new ApiError(err.code, {
      message: err.message,
      details: err.details,
      headers: { ...err.headers, connection: 'close' },
    });
  }
  counter.drain();
  return err;
}

/** @fastify/multipart and busboy errors → the spec's codes (never a 500 for a malformed body). */
function formError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const code = (err as { code?: string }).code ?? '';
  if (
    code === 'FST_FILES_LIMIT' ||
    code === 'FST_FIELDS_LIMIT' ||
    code === 'FST_PARTS_LIMIT' ||
    code === 'FST_ERR_CTP_BODY_TOO_LARGE'
  ) {
    return new ApiError('payload_too_large', { message: 'The form has too many or too large parts.' });
  }
  return new ApiError('bad_request', {
    message: `The multipart body could not be read: ${(err as Error).message ?? 'malformed'}.`,
  });
}
