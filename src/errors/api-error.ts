import { ERROR_CATALOG, type ErrorCode } from './catalog.js';

export type ErrorDetails = Record<string, unknown>;

/**
 * The one error type domain code throws. The handler turns it into the spec's envelope;
 * `headers` carries what some codes need beside the body (Retry-After on 429).
 */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetails | undefined;
  readonly headers: Readonly<Record<string, string>> | undefined;

  /** `cause`: what went wrong underneath, for the log (the handler logs it at warn); never answered. */
  constructor(
    code: ErrorCode,
    options: { message?: string; details?: ErrorDetails; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(options.message ?? ERROR_CATALOG[code].message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_CATALOG[code].status;
    this.details = options.details;
    this.headers = options.headers;
  }
}

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}
