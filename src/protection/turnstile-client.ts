import { randomUUID } from 'node:crypto';

/** Cloudflare's siteverify answer (only the fields we read). */
export interface SiteverifyResult {
  success: boolean;
  errorCodes: string[];
  hostname: string | undefined;
  challengeTs: string | undefined;
  action: string | undefined;
  cdata: string | undefined;
}

export interface VerifyRequest {
  secret: string;
  token: string;
  remoteIp: string | undefined;
}

/** The CAPTCHA seam: Cloudflare's siteverify in production, a local server speaking it in tests. */
export interface CaptchaVerifier {
  verify(request: VerifyRequest): Promise<SiteverifyResult>;
}

/** The verifier could not give an answer (down, slow, broken reply): the send gets 503. */
export class VerifierUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VerifierUnavailable';
  }
}

const RETRYABLE_CODES = new Set(['internal-error']);

/**
 * siteverify over HTTP: a form-encoded POST of `secret`, `response`, `remoteip` and an
 * `idempotency_key`, answered with JSON. The whole exchange, including one retry after a
 * connection failure (same idempotency key, so Cloudflare answers the retry as it would have
 * answered the first call), must finish within `timeoutMs`.
 */
export class TurnstileClient implements CaptchaVerifier {
  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  async verify(request: VerifyRequest): Promise<SiteverifyResult> {
    const form = new URLSearchParams({ secret: request.secret, response: request.token, idempotency_key: randomUUID() });
    if (request.remoteIp !== undefined && request.remoteIp !== '') form.set('remoteip', request.remoteIp);
    const signal = AbortSignal.timeout(this.timeoutMs);
    let lastError: unknown;
    for (let attempt = 0; attempt < 2; attempt++) {
      let response: Response;
      try {
        response = await fetch(this.url, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: form.toString(),
          signal,
        });
      } catch (err) {
        lastError = err;
        if (signal.aborted) break;
        continue;
      }
      let body: unknown;
      try {
        body = await response.json();
      } catch {
        throw new VerifierUnavailable(
          signal.aborted
            ? `siteverify timed out after ${this.timeoutMs} ms`
            : `siteverify answered ${response.status} without JSON`,
        );
      }
      if (response.status >= 500) throw new VerifierUnavailable(`siteverify answered ${response.status}`);
      const result = parseResult(body);
      if (result === undefined) throw new VerifierUnavailable(`siteverify answered ${response.status} with an unexpected body`);
      if (!result.success && result.errorCodes.some((c) => RETRYABLE_CODES.has(c))) {
        throw new VerifierUnavailable(`siteverify reported ${result.errorCodes.join(', ')}`);
      }
      return result;
    }
    if (signal.aborted) throw new VerifierUnavailable(`siteverify timed out after ${this.timeoutMs} ms`);
    const why =
      lastError instanceof Error
        ? lastError.cause instanceof Error
          ? lastError.cause.message
          : lastError.message
        : String(lastError);
    throw new VerifierUnavailable(`siteverify unreachable: ${why}`);
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function parseResult(body: unknown): SiteverifyResult | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const o = body as Record<string, unknown>;
  if (typeof o.success !== 'boolean') return undefined;
  const codes = o['error-codes'];
  return {
    success: o.success,
    errorCodes: Array.isArray(codes) ? codes.filter((c): c is string => typeof c === 'string') : [],
    hostname: str(o.hostname),
    challengeTs: str(o.challenge_ts),
    action: str(o.action),
    cdata: str(o.cdata),
  };
}
