/**
 * The UI's only way to the server: the admin API, relative to the page (`<base>/ui/` →
 * `<base>/admin/v1/`), so a path prefix in front of mailroom needs no setting. The session
 * cookie goes with every call (same origin); the admin token itself is never stored by the UI.
 * State-changing calls carry X-CSRF-Token, the session's token kept in memory only.
 */
import { fieldMessages } from '../lib/field-messages';
import type { ErrorEnvelope, Session } from './types';

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Readonly<Record<string, unknown>> | undefined,
    readonly retryAfterSeconds: number | undefined,
  ) {
    super(message);
  }

  /**
   * Field problems of a 400/422 as `{field or path: message in words}` (lib/field-messages.ts),
   * for showing under inputs; a list's entry also under the list, as its 1-based line.
   */
  fieldIssues(): Record<string, string> {
    const issues: Array<{ field: string; message: string }> = [];
    const d = this.details as { issues?: unknown; fields?: unknown } | undefined;
    for (const list of [d?.issues, d?.fields]) {
      if (!Array.isArray(list)) continue;
      for (const item of list as Array<Record<string, unknown>>) {
        const field = String(item.field ?? item.param ?? item.path ?? '');
        if (field !== '') issues.push({ field, message: String(item.message ?? item.code ?? 'invalid') });
      }
    }
    return fieldMessages(issues);
  }
}

type Query = Record<string, string | number | boolean | undefined>;

let csrfToken: string | undefined;
let onSignedOut: () => void = () => {};

/** Called with the session after sign-in or on load; cleared on sign-out. */
export function setSession(session: Session | undefined): void {
  csrfToken = session?.csrf_token;
}

/** What the app does when any call answers 401 (the session expired or was ended elsewhere). */
export function onUnauthorized(handler: () => void): void {
  onSignedOut = handler;
}

export function apiUrl(path: string, query?: Query): string {
  const url = new URL(`../admin/v1${path}`, window.location.href);
  url.hash = '';
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
  return url.toString();
}

/** A body sent as it is, with its own content type (a CSV file to import), not as JSON. */
class RawBody {
  constructor(
    readonly type: string,
    readonly data: Blob | string,
  ) {}
}

async function call<T>(method: string, path: string, body?: unknown, query?: Query): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = body instanceof RawBody ? body.type : 'application/json';
  if (method !== 'GET' && csrfToken !== undefined) headers['x-csrf-token'] = csrfToken;
  const response = await fetch(apiUrl(path, query), {
    method,
    headers,
    body: body === undefined ? undefined : body instanceof RawBody ? body.data : JSON.stringify(body),
    credentials: 'same-origin',
    cache: 'no-store',
  });
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!response.ok) {
    const err = (json as ErrorEnvelope | undefined)?.error;
    const retry = Number(response.headers.get('retry-after'));
    const failure = new ApiFailure(
      response.status,
      err?.code ?? `http_${response.status}`,
      err?.message ?? `The server answered ${response.status}.`,
      err?.details,
      Number.isFinite(retry) && retry > 0 ? retry : undefined,
    );
    if (response.status === 401 && path !== '/session') onSignedOut();
    throw failure;
  }
  return json as T;
}

export const api = {
  get: <T>(path: string, query?: Query) => call<T>('GET', path, undefined, query),
  post: <T>(path: string, body?: unknown) => call<T>('POST', path, body ?? {}),
  put: <T>(path: string, body: unknown) => call<T>('PUT', path, body),
  patch: <T>(path: string, body: unknown) => call<T>('PATCH', path, body),
  delete: <T = void>(path: string) => call<T>('DELETE', path),
  /** POST of a file or text as it is (`type`: its content type), answered in JSON like any call. */
  postRaw: <T>(path: string, type: string, data: Blob | string) => call<T>('POST', path, new RawBody(type, data)),
};

/** `/organizations/<org>` with the id encoded; pages build their paths from it. */
export const orgPath = (org: string, ...rest: string[]): string =>
  ['/organizations', org, ...rest].map((p, i) => (i === 0 ? p : encodeURIComponent(p))).join('/');
