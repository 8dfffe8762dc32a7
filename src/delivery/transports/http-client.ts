import type { Dispatcher } from 'undici';
import { isTlsFailure } from '../classify.js';
import { Agent, request } from '../../net/undici.js';
import { DeliveryError, type ServiceTestReason } from '../transport.js';

/**
 * The one HTTP client of the provider transports (Postmark, SendGrid, Resend, Mailgun): a pooled,
 * keep-alive undici Agent per transport instance, a deadline per request, no redirects (undici's
 * request follows none without an interceptor) and no retries (the worker's schedule and the
 * breaker count attempts: a client retrying on its own would turn one attempt into several sends).
 */

/** A multipart body (Mailgun's messages.mime): the global FormData, serialised here. */
export interface MultipartBody {
  multipart: FormData;
}

export interface ProviderRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer | MultipartBody;
  /** This request's deadline, from connect to the last byte of the answer (default: the client's). */
  timeoutMs?: number;
}

export interface ProviderResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The answer's text, cut at MAX_BODY_BYTES (an error page is never worth more). */
  body: string;
}

export interface ProviderHttp {
  request(req: ProviderRequest): Promise<ProviderResponse>;
  close(): Promise<void>;
}

export interface ProviderHttpOptions {
  /** Per-request deadline. 30 s: a provider's API answers a send in well under a second. */
  timeoutMs?: number;
  /** Sockets per origin. 16 keeps a busy worker's concurrent sends off a queue. */
  connections?: number;
  /** Names the provider in error messages ("postmark: connect ECONNREFUSED …"). */
  provider?: string;
}

/** 1 MiB: success bodies are a few hundred bytes, error pages a few KB. */
export const MAX_BODY_BYTES = 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * A request that got no answer: connection refused or reset, timeout, DNS, TLS. `kind` follows the
 * SMTP transport's rule (classify.ts): a host that does not resolve (a mistyped `endpoint`) and
 * a certificate the client refuses are the service's problem; the rest pass on their own.
 * `reason` is what a service test reports for it.
 */
export class ProviderConnectionError extends DeliveryError {
  constructor(
    kind: 'temporary' | 'service',
    message: string,
    readonly reason: ServiceTestReason,
    readonly code: string,
  ) {
    super(kind, message);
    this.name = 'ProviderConnectionError';
  }
}

export function createProviderHttp(options: ProviderHttpOptions = {}): ProviderHttp {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const provider = options.provider ?? 'http';
  const agent = new Agent({
    connections: options.connections ?? 16,
    // A provider's load balancer drops idle sockets after about 60 s; reuse within 30 s.
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 60_000,
    connect: { timeout: Math.min(timeoutMs, 10_000) },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  return {
    async request(req) {
      const deadline = req.timeoutMs ?? timeoutMs;
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, deadline);
      timer.unref();
      const url = new URL(req.url);
      try {
        const { body, headers } = await bodyOf(req);
        const res = await request(agent, {
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: req.method,
          headers: { ...req.headers, ...headers },
          ...(body !== undefined ? { body } : {}),
          signal: controller.signal,
        });
        const text = await readCapped(res.body);
        return { status: res.statusCode, headers: res.headers, body: text };
      } catch (error) {
        throw connectionError(provider, url, error, timedOut, deadline);
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      await agent.close().catch(() => agent.destroy());
    },
  };
}

/** The global FormData serialised by the global Response (Node's own fetch): boundary and all. */
async function bodyOf(req: ProviderRequest): Promise<{ body: string | Buffer | undefined; headers: Record<string, string> }> {
  const b = req.body;
  if (b === undefined || typeof b === 'string' || Buffer.isBuffer(b)) return { body: b, headers: {} };
  const encoded = new Response(b.multipart);
  const type = encoded.headers.get('content-type') ?? 'multipart/form-data';
  return { body: Buffer.from(await encoded.arrayBuffer()), headers: { 'content-type': type } };
}

async function readCapped(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf: Buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    chunks.push(buf);
    size += buf.length;
    if (size >= MAX_BODY_BYTES) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString('utf8');
}

function fieldOf(error: unknown, name: string): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const v: unknown = Reflect.get(error, name);
  return typeof v === 'string' ? v : undefined;
}

/** The code of the error or of its cause (undici wraps socket errors; Node ≥ 20 may aggregate). */
function codeOf(error: unknown): string {
  const own = fieldOf(error, 'code');
  if (own !== undefined && own !== 'UND_ERR_SOCKET') return own;
  if (typeof error === 'object' && error !== null) {
    const cause: unknown = Reflect.get(error, 'cause');
    if (cause !== undefined && cause !== error) {
      const inner = codeOf(cause);
      if (inner !== '') return inner;
    }
    const errors: unknown = Reflect.get(error, 'errors');
    if (Array.isArray(errors) && errors.length > 0) return codeOf(errors[0]);
  }
  return own ?? '';
}

const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

export function connectionError(
  provider: string,
  url: URL,
  error: unknown,
  timedOut: boolean,
  deadlineMs: number,
): ProviderConnectionError {
  if (error instanceof ProviderConnectionError) return error;
  const code = codeOf(error);
  const message = (fieldOf(error, 'message') ?? String(error)).trim() || code || 'request failed';
  const where = `${url.host}`;
  if (timedOut || TIMEOUT_CODES.has(code)) {
    return new ProviderConnectionError(
      'temporary',
      `${provider}: no answer from ${where} within ${deadlineMs} ms (${code || 'timeout'})`,
      'timeout',
      code || 'ETIMEDOUT',
    );
  }
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const causeHost = fieldOf(Reflect.get(Object(error), 'cause'), 'hostname') ?? fieldOf(error, 'hostname');
  if ((code === 'ENOTFOUND' || code === 'ENODATA') && (causeHost === undefined || causeHost === hostname)) {
    return new ProviderConnectionError(
      'service',
      `${provider}: the endpoint host ${hostname} does not resolve (${code}): check the service's endpoint`,
      'connect',
      code,
    );
  }
  const causeMessage = fieldOf(Reflect.get(Object(error), 'cause'), 'message') ?? '';
  if (isTlsFailure({ originalCode: code, message: `${message} ${causeMessage}` })) {
    return new ProviderConnectionError(
      'service',
      `${provider}: TLS with ${where} failed: ${code ? `${code} ` : ''}${message}`,
      'tls',
      code,
    );
  }
  const detail = message.includes(code) || code === '' ? message : `${code} ${message}`;
  return new ProviderConnectionError('temporary', `${provider}: ${detail}`, CONNECT_CODES.has(code) ? 'connect' : 'other', code);
}
