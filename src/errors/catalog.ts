/**
 * The one error catalog: every code of the spec's Errors table with its HTTP status and a
 * human message. The error handler, the served reference page and the OpenAPI error schema
 * all read from here; test/errors/catalog.test.ts keeps it in step with the spec's table.
 */
export const ERROR_CATALOG = {
  bad_request: {
    status: 400,
    message: 'The request could not be understood: wrong content type, unreadable JSON or unsupported method.',
  },
  invalid_body: { status: 400, message: 'The request body or query does not match the schema.' },
  invalid_idempotency_key: {
    status: 400,
    message: 'The Idempotency-Key header is empty, longer than 255 characters or has characters outside [A-Za-z0-9_-:.].',
  },
  unauthorized: { status: 401, message: 'No key was sent, or the key matches no organization.' },
  invalid_public_key: { status: 401, message: 'The public key is unknown or was rotated.' },
  invalid_private_key: { status: 401, message: 'The private key is unknown or was revoked.' },
  insufficient_credits: { status: 402, message: 'The organization has no credits left.' },
  forbidden: { status: 403, message: 'This key or user is not allowed to do this.' },
  origin_not_allowed: { status: 403, message: 'The request origin is not allowed for this public key.' },
  captcha_required: { status: 403, message: 'This template requires a CAPTCHA token.' },
  captcha_failed: { status: 403, message: 'The CAPTCHA token is invalid, expired or already used.' },
  captcha_not_configured: { status: 403, message: 'CAPTCHA is required but not configured for this organization.' },
  headless_blocked: { status: 403, message: 'Requests from headless browsers are blocked for this organization.' },
  recipient_blocked: { status: 403, message: 'A recipient or watched value matches the block list.' },
  private_key_required: { status: 403, message: 'This endpoint or organization requires a private key.' },
  private_key_in_browser: { status: 403, message: 'A private key must not be sent from a web page.' },
  email_not_verified: { status: 403, message: 'The account owner has not verified their e-mail address.' },
  organization_suspended: { status: 403, message: 'The organization is suspended.' },
  plan_limit_reached: { status: 403, message: 'A plan limit was reached.' },
  dynamic_recipient_not_allowed: {
    status: 403,
    message: 'A recipient is built from a parameter but the template does not allow dynamic recipients.',
  },
  dynamic_recipient_requires_captcha: {
    status: 403,
    message: 'Public-key sends to dynamic recipients require CAPTCHA on the template.',
  },
  dynamic_field_not_allowed: { status: 403, message: 'A sender field may not be built from parameters in this send.' },
  link_not_allowed: { status: 403, message: 'The email links to a domain outside the allowed link domains.' },
  attachments_not_allowed: { status: 403, message: 'Attachments are not allowed here, or the file type is blocked.' },
  not_found: { status: 404, message: 'No endpoint matches this URL.' },
  service_not_found: { status: 404, message: 'The email service was not found, or no default service is set.' },
  template_not_found: { status: 404, message: 'The template was not found.' },
  message_not_found: { status: 404, message: 'The message was not found.' },
  conflict: { status: 409, message: 'The resource changed concurrently or is in a state that refuses this operation.' },
  idempotency_conflict: {
    status: 409,
    message: 'This idempotency key was used with a different body, or its first request is still in progress.',
  },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  attachment_too_large: { status: 413, message: 'The attachments exceed the plan limit.' },
  invalid_template_params: { status: 422, message: 'The template parameters do not match the template schema.' },
  template_render_failed: { status: 422, message: 'The template could not be rendered with these parameters.' },
  invalid_recipient: { status: 422, message: 'A rendered recipient address is invalid, or To is empty.' },
  service_unavailable_for_template: { status: 422, message: 'The template has no usable email service.' },
  sender_not_configured: { status: 422, message: 'No From address is set on the template or service.' },
  rate_limited: { status: 429, message: 'Too many requests; retry after the number of seconds in Retry-After.' },
  test_send_limit: { status: 429, message: 'The free test sends for today are used up.' },
  recipient_suppressed: { status: 451, message: 'A recipient is on the suppression list.' },
  internal_error: { status: 500, message: 'Something failed inside the service; a retry with the same Idempotency-Key is safe.' },
  provider_error: { status: 502, message: 'The email provider returned an unexpected error.' },
  service_unavailable: { status: 503, message: 'The service is temporarily unavailable.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export const ERROR_CODES = Object.keys(ERROR_CATALOG) as ErrorCode[];

/** `{docs_url}/reference/errors/#<code with underscores replaced by hyphens>` (spec, Errors). */
export function errorAnchor(code: ErrorCode): string {
  return code.replaceAll('_', '-');
}

export function docsUrlFor(docsBase: string, code: ErrorCode): string {
  return `${docsBase.replace(/\/+$/, '')}/reference/errors/#${errorAnchor(code)}`;
}
