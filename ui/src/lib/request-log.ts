/**
 * The request log's filters in the hash query (`#/orgs/acme/request-log?status=422&code=…`), the
 * API's own names, and the error codes in plain words. Pure: unit-tested in test/ui/request-log.test.ts.
 */
import { textFiltersFromQuery, textFiltersToQuery } from './inbox-filters.js';

export const REQUEST_LOG_FILTER_KEYS = ['status', 'code', 'key_id', 'route', 'since', 'until'] as const;

export type RequestLogFilters = Record<(typeof REQUEST_LOG_FILTER_KEYS)[number], string>;

export const NO_REQUEST_LOG_FILTERS: RequestLogFilters = { status: '', code: '', key_id: '', route: '', since: '', until: '' };

export const requestLogFiltersFromQuery = (query: URLSearchParams): RequestLogFilters =>
  textFiltersFromQuery(query, REQUEST_LOG_FILTER_KEYS);

export const requestLogFiltersToQuery = (f: RequestLogFilters, cursor?: string): Record<string, string | undefined> =>
  textFiltersToQuery(f, cursor);

export const hasRequestLogFilters = (f: RequestLogFilters): boolean => Object.values(f).some((v) => v !== '');

/** What a filter value must look like before Apply navigates (the server says the same as a 400). */
export function requestLogProblems(f: RequestLogFilters): Record<string, string> {
  const out: Record<string, string> = {};
  if (f.status !== '' && !/^4\d\d$/.test(f.status)) out.status = 'A status from 400 to 499, e.g. 422';
  if (f.code !== '' && !/^[a-z_]+$/.test(f.code)) out.code = 'An error code: lower-case letters and _';
  return out;
}

/** The statuses a refusal has most often, for the filter's choices. */
export const COMMON_STATUSES: ReadonlyArray<readonly [string, string]> = [
  ['', 'Any'],
  ['400', '400 Bad request'],
  ['401', '401 Key refused'],
  ['402', '402 Out of credits'],
  ['403', '403 Not allowed'],
  ['404', '404 Not found'],
  ['409', '409 Conflict'],
  ['413', '413 Too large'],
  ['422', '422 Cannot be sent as asked'],
  ['429', '429 Rate limited'],
  ['451', '451 Recipient suppressed'],
];

/** Error codes in words; a code not named here shows as itself. */
const CODE_WORDS: Readonly<Record<string, string>> = {
  bad_request: 'Malformed request',
  invalid_body: 'Invalid request body',
  invalid_idempotency_key: 'Invalid idempotency key',
  unauthorized: 'No valid key',
  invalid_public_key: 'Unknown or revoked public key',
  invalid_private_key: 'Unknown or revoked private key',
  insufficient_credits: 'Out of credits',
  forbidden: 'Not allowed',
  origin_not_allowed: 'Web page origin not allowed',
  captcha_required: 'CAPTCHA missing',
  captcha_failed: 'CAPTCHA failed',
  captcha_not_configured: 'CAPTCHA not configured',
  headless_blocked: 'Headless browser refused',
  recipient_blocked: 'Recipient on the block list',
  private_key_required: 'Needs a private key',
  private_key_in_browser: 'Private key used in a browser',
  organization_suspended: 'Organization suspended',
  plan_limit_reached: 'Plan limit reached',
  dynamic_recipient_not_allowed: 'Recipient from parameters not allowed',
  link_not_allowed: 'Link outside the allowed domains',
  attachments_not_allowed: 'Attachments not allowed',
  not_found: 'Not found',
  service_not_found: 'Service not found',
  template_not_found: 'Template not found',
  message_not_found: 'Message not found',
  idempotency_conflict: 'Idempotency key reused',
  payload_too_large: 'Request too large',
  attachment_too_large: 'Attachment too large',
  invalid_template_params: 'Template parameters do not match',
  template_render_failed: 'Template failed to render',
  invalid_recipient: 'Invalid recipient address',
  rate_limited: 'Rate limited',
  recipient_suppressed: 'Recipient suppressed',
  request_log_capped: 'More refusals not logged',
};

export const codeWords = (code: string): string => CODE_WORDS[code] ?? code;

/** The fields as indented JSON text (shown in a <pre>: text, never HTML). */
export const fieldsText = (fields: Record<string, unknown>): string => JSON.stringify(fields, null, 2);
