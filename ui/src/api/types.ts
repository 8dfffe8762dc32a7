/** Shapes of the admin API's answers that the UI reads (see the OpenAPI document at /docs). */

export interface ErrorEnvelope {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

/** GET/POST /admin/v1/session. */
export interface Session {
  expires_at: string;
  csrf_token: string;
}

/** GET /admin/v1/server: the mode the server runs in and what it relaxes. */
export interface ServerMode {
  mode: 'development' | 'production';
  relaxed: string[];
}

/** A page of a cursor-paginated list. */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}
