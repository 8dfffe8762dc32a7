// The request log's table (migration 0020, issue 29); schema.ts lists it in Database.

/** A refused public API request (4xx), as src/storage/request-log.ts writes and reads it. */
export interface RequestLogTable {
  /** `rql_…`, sortable by creation (newSortableId). */
  id: string;
  org_id: string;
  created_at: number;
  /** The key's id (never the key), when a key was found; null when the organization came another way. */
  key_id: string | null;
  method: string;
  /** The route pattern, never the URL as sent. */
  route: string;
  status: number;
  /** The error code answered (`invalid_template_params`), or `request_log_capped` for a summary row. */
  code: string;
  message: string;
  /** JSON object of the request's non-secret fields, at most 2 KiB. */
  fields: string;
  ip: string | null;
}
