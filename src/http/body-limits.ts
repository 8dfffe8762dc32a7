import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors/api-error.js';

/**
 * MAILROOM_BODY_LIMIT_BYTES holds for every route that takes a body, whatever parses it:
 * Fastify's own parsers count JSON bodies, the form reader counts multipart ones, and this file
 * refuses a declared length over the limit before anything else runs.
 */

/** The declared Content-Length, or undefined when there is none (a chunked body) or it is not a number. */
export function declaredLength(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value);
}

/**
 * 413 payload_too_large; `Connection: close` because the rest of the body is left unread: the
 * socket ends after the answer, and what the client still sends is dropped for a bounded time
 * rather than answered with a reset (src/errors/lingering-close.ts, applied by the error handler).
 */
export function bodyTooLarge(limit: number): ApiError {
  return new ApiError('payload_too_large', {
    message: `The request body is larger than ${limit} bytes.`,
    details: { limit },
    headers: { connection: 'close' },
  });
}

/**
 * A declared length over the limit is refused at onRequest: before the body is read, before the
 * key, template, rate limits or CAPTCHA are looked at (the hook is the first thing a routed
 * request meets). A client that asks `Expect: 100-continue` is answered 413 without the
 * `100 Continue` that would invite the body.
 */
export function installBodyLimits(app: FastifyInstance, limit: number): void {
  app.addHook('onRequest', async (request) => {
    const declared = declaredLength(request.headers['content-length']);
    if (declared !== undefined && declared > limit) throw bodyTooLarge(limit);
  });
  const server: Server = app.server;
  // With a 'checkContinue' listener Node leaves the 100 to us; the request then goes through
  // Fastify as usual, where the hook above refuses it.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const declared = declaredLength(req.headers['content-length']);
    if (declared === undefined || declared <= limit) res.writeContinue();
    server.emit('request', req, res);
  });
}
