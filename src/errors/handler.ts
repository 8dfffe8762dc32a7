import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { endLingering, isLingering, lingerAfterAnswer } from './lingering-close.js';
import { ApiError } from './api-error.js';
import type { ErrorCode } from './catalog.js';
import { errorBody } from './envelope.js';
import { storageTrouble, type StorageTrouble } from './storage-trouble.js';
import { unavailableError } from './unavailable.js';

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

/**
 * The one error handler. Domain errors (ApiError) keep their code; Fastify's own errors are
 * mapped to the spec's codes; anything else is a 500 `internal_error` that names the request
 * id and never the cause, which goes to the log instead.
 */
/** What the handler needs of the storage health (src/storage/health.ts): to hear of trouble, once per error. */
export interface TroubleReporter {
  report(error: unknown): StorageTrouble | undefined;
}

export function installErrorHandling(
  app: FastifyInstance,
  docsBase: string,
  routePatterns: readonly RegExp[],
  health?: TroubleReporter,
  onRefused?: (request: FastifyRequest, err: ApiError) => void,
): void {
  const send = (reply: FastifyReply, err: ApiError) => {
    if (err.headers !== undefined) reply.headers(err.headers);
    // The request log (src/http/refused-requests.ts) hears of every 4xx; it never throws or waits.
    if (onRefused !== undefined && err.status < 500) onRefused(reply.request, err);
    // An answer that closes the connection before the body is read (ours, or Fastify's parser's
    // refusal): read and drop the rest for a moment rather than reset the uploading client.
    if (reply.getHeader('connection') === 'close') lingerAfterAnswer(reply.raw);
    return reply
      .code(err.status)
      .type('application/json; charset=utf-8')
      .send(errorBody(docsBase, err.code, err.message, err.details));
  };

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ApiError) {
      // An answer for trouble elsewhere (the attachment store refused a file): the operator
      // needs what happened, which the client is never told.
      if (error.cause !== undefined)
        request.log.warn({ err: error.cause, code: error.code, reason: error.details?.reason }, error.message);
      return send(reply, error);
    }
    // The database went away or the disk is full: an expected state, answered 503 with
    // Retry-After. The log line comes once per spell of trouble (StorageHealth's listener),
    // not a stack per request; here only a debug line.
    const trouble = health?.report(error) ?? storageTrouble(error);
    if (trouble !== undefined) {
      request.log.debug({ reason: trouble, err: error.message }, 'storage unavailable');
      return send(reply, unavailableError(trouble));
    }
    const mapped = mapFastifyError(error, request) ?? mapUnstorableText(error);
    if (mapped !== undefined) return send(reply, mapped);
    request.log.error({ err: error }, 'unhandled error');
    return send(reply, new ApiError('internal_error', { details: { request_id: request.id } }));
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    // A known path with a method it does not take is a malformed request, not a missing page.
    if (routePatterns.some((re) => re.test(path))) {
      return send(reply, new ApiError('bad_request', { message: `Method ${request.method} is not supported on ${path}.` }));
    }
    return send(reply, new ApiError('not_found', { message: `No endpoint matches ${request.method} ${path}.` }));
  });
}

/**
 * A safety net behind the routes' own checks: PostgreSQL refuses a NUL character in text
 * (22021) and in JSON text (22P05). Input that reaches SQL with one is the caller's, not a 500.
 */
function mapUnstorableText(error: { code?: unknown }): ApiError | undefined {
  if (error.code !== '22021' && error.code !== '22P05') return undefined;
  return new ApiError('bad_request', { message: 'The request holds a character that cannot be stored or looked up (NUL).' });
}

/**
 * Fastify answers a few errors before any route or hook runs, with a body of its own: a path
 * that is not valid percent-encoding (`/v1/messages/%FF`) above all. They get the envelope too.
 */
export function frameworkErrors(docsBase: string) {
  return (error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void => {
    const message =
      error.code === 'FST_ERR_BAD_URL'
        ? 'The request path is not valid percent-encoded UTF-8.'
        : 'The request could not be read.';
    void reply
      .code(400)
      .type('application/json; charset=utf-8')
      .send(errorBody(docsBase, 'bad_request', message, undefined));
  };
}

/**
 * Node's HTTP parser refuses some requests before Fastify sees them: headers over the size
 * limit, a malformed request line, contradictory framing (Content-Length with chunked), a body
 * too slow to arrive. The answer is the envelope too, then the connection is closed: the parser
 * cannot find where the next request would start. Status by Node's own mapping; the spec has
 * one code for a request that cannot be read, bad_request, whatever the status (431 and 408
 * included); an oversized chunk extension is a body too large, payload_too_large.
 */
export function clientErrorHandler(docsBase: string) {
  return function onClientError(this: FastifyInstance, err: Error & { code?: string }, socket: Socket): void {
    // A reset connection has nobody to answer; a lingering one was answered already (its
    // parser, stuck on the first error, reports it again for every chunk it drops).
    if (err.code === 'ECONNRESET' || socket.destroyed || isLingering(socket)) return;
    const [status, code, message] = clientErrorAnswer(err.code);
    this.log.debug({ err: err.message, code: err.code }, 'client error');
    // Never write into a response already on its way (a parse error in a later body).
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && inFlight?.headersSent !== true) {
      const body = JSON.stringify(errorBody(docsBase, code, message, undefined));
      // end() flushes the answer first; the socket then lingers (src/errors/lingering-close.ts): a
      // client still sending would otherwise be reset before it reads the answer. It is
      // destroyed when the peer closes its side, or after a bounded time if it never does.
      endLingering(
        socket,
        `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json; ` +
          `charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    socket.destroy();
  };
}

function clientErrorAnswer(code: string | undefined): [number, ErrorCode, string] {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'bad_request', 'The request headers are larger than the server accepts.'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'bad_request', 'The request did not arrive in time.'];
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return [413, 'payload_too_large', 'The chunk extensions of the request body are too large.'];
    default:
      return [400, 'bad_request', 'The request could not be parsed as HTTP/1.1 (request line, headers or framing).'];
  }
}

function mapFastifyError(error: FastifyError, request: FastifyRequest): ApiError | undefined {
  if (error.validation !== undefined) {
    const fields = (error.validation as ValidationIssue[]).map((v) => ({
      field: fieldName(error.validationContext ?? 'body', v),
      message: v.message ?? 'is invalid',
    }));
    const where = error.validationContext === 'querystring' ? 'query' : (error.validationContext ?? 'body');
    return new ApiError('invalid_body', {
      message: `The request ${where} is invalid: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}.`,
      details: { fields },
    });
  }
  const codeMap: Record<string, ErrorCode> = {
    FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
    FST_ERR_CTP_INVALID_MEDIA_TYPE: 'bad_request',
    FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
  };
  const byCode = error.code !== undefined ? codeMap[error.code] : undefined;
  if (byCode === 'bad_request' && error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return new ApiError('bad_request', {
      message: `Content-Type ${request.headers['content-type'] ?? '(none)'} is not accepted here.`,
    });
  }
  if (byCode !== undefined) return new ApiError(byCode);
  if (error instanceof SyntaxError || error.statusCode === 400) {
    return new ApiError('bad_request', { message: 'The request body could not be read as JSON.' });
  }
  if (error.statusCode === 413) return new ApiError('payload_too_large');
  if (error.statusCode === 404) return new ApiError('not_found');
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) return new ApiError('bad_request');
  return undefined;
}

/** `/template_params/name` → `template_params.name`; a missing property names itself. */
function fieldName(context: string, v: ValidationIssue): string {
  const base = (v.instancePath ?? '').split('/').filter(Boolean).join('.');
  const missing = v.keyword === 'required' ? String(v.params?.missingProperty ?? '') : '';
  const additional = v.keyword === 'additionalProperties' ? String(v.params?.additionalProperty ?? '') : '';
  const name = [base, missing || additional].filter(Boolean).join('.');
  return name || (context === 'querystring' ? 'query' : context);
}

/** `/v1/messages/:id` → a RegExp that matches concrete paths of that route. */
export function routePattern(url: string): RegExp {
  const escaped = url.split('/').map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${escaped.join('/')}/?$`);
}
