import type { ErrorCode } from '../errors/catalog.js';
import { isApiError, type ApiError } from '../errors/api-error.js';
import { storageTrouble } from '../errors/storage-trouble.js';
import { smtpError, type SmtpError } from '../smtp/server.js';

/**
 * What the submission listener answers (issue 28, design §4): every reply carries exactly one
 * enhanced status code (RFC 3463) of ours. smtp-server would prefix its own from a fixed table
 * (451→4.3.0, 452→4.2.2, 538→5.7.0, 552→5.2.2, 250 after DATA→2.6.0), so the issue's codes
 * (451 4.7.1, 452 4.3.1, 538 5.7.11, 250 2.0.0) need `ownEnhancedCodes` below.
 */

export interface SmtpRefusal {
  code: number;
  enhanced: string;
  text: string;
}

/** A refusal as smtp-server's callbacks take it: the message starts with our enhanced code. */
export function refusalError(r: SmtpRefusal): SmtpError {
  return smtpError(r.code, `${r.enhanced} ${r.text}`);
}

const refuse = (code: number, enhanced: string, text: string): SmtpRefusal => ({ code, enhanced, text });

export const TEMPORARY: SmtpRefusal = refuse(451, '4.3.0', 'Temporary local problem, try again later');
export const BAD_CREDENTIALS: SmtpRefusal = refuse(535, '5.7.8', 'Authentication credentials invalid');
export const TLS_FIRST: SmtpRefusal = refuse(538, '5.7.11', 'Must issue a STARTTLS command first');
export const AUTH_UNAVAILABLE: SmtpRefusal = refuse(454, '4.7.0', 'Temporary authentication failure');

/** A reply line holds at most 512 octets (RFC 5321 §4.5.3.1.5): our texts stay well under it, one line. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 400 ? `${flat.slice(0, 397)}...` : flat;
}

type Rule = (err: ApiError) => SmtpRefusal;
const permanent =
  (code: number, enhanced: string): Rule =>
  (err) =>
    refuse(code, enhanced, oneLine(err.message));
const CONFIG_MISSING = refuse(451, '4.3.5', 'System not configured to send for this organization');

/** The first parameter issue, named: `Template parameter "email": must be an e-mail address (and 2 more)`. */
function paramsText(err: ApiError): string {
  const issues = err.details?.issues;
  if (!Array.isArray(issues) || issues.length === 0) return oneLine(err.message);
  const first: unknown = issues[0];
  const param = typeof first === 'object' && first !== null && 'param' in first ? String(first.param) : '?';
  const message = typeof first === 'object' && first !== null && 'message' in first ? String(first.message) : '';
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return oneLine(`Template parameter "${param}": ${message}${more}`);
}

/**
 * One entry per error code the send path can throw; anything else is a temporary 451 4.3.0
 * (logged by the caller), so a new send error shows up as a test failure (replies.test.ts walks
 * the catalog) rather than a temporary failure that clients retry for days.
 */
export const REPLIES: Readonly<Record<ErrorCode, Rule | undefined>> = {
  bad_request: permanent(554, '5.6.0'),
  invalid_body: (err) => {
    const reason = err.details?.reason;
    // L7: the From header's domain is not the service's.
    if (reason === 'sender_not_allowed') return refuse(550, '5.7.1', oneLine(err.message));
    return refuse(554, '5.6.0', oneLine(err.message));
  },
  invalid_idempotency_key: permanent(554, '5.6.0'),
  unauthorized: () => BAD_CREDENTIALS,
  invalid_public_key: () => BAD_CREDENTIALS,
  invalid_private_key: () => BAD_CREDENTIALS,
  insufficient_credits: (err) => refuse(452, '4.3.1', oneLine(err.message)),
  forbidden: permanent(550, '5.7.1'),
  origin_not_allowed: permanent(550, '5.7.1'),
  captcha_required: permanent(550, '5.7.1'),
  captcha_failed: permanent(550, '5.7.1'),
  captcha_not_configured: permanent(550, '5.7.1'),
  headless_blocked: permanent(550, '5.7.1'),
  recipient_blocked: (err) => refuse(550, '5.1.1', oneLine(`Recipient refused: ${err.message}`)),
  private_key_required: permanent(550, '5.7.1'),
  private_key_in_browser: permanent(550, '5.7.1'),
  email_not_verified: permanent(550, '5.7.1'),
  organization_suspended: permanent(550, '5.7.1'),
  plan_limit_reached: permanent(554, '5.7.1'),
  dynamic_recipient_not_allowed: permanent(554, '5.7.1'),
  dynamic_recipient_requires_captcha: permanent(554, '5.7.1'),
  dynamic_field_not_allowed: permanent(554, '5.7.1'),
  link_not_allowed: permanent(554, '5.7.1'),
  attachments_not_allowed: permanent(554, '5.7.1'),
  not_found: undefined,
  // A named X-Mailroom-Service that does not exist is the message's fault (554); no default
  // service is the operator's, and a temporary 451 4.3.5 keeps the app's queue until it is set.
  service_not_found: (err) => (/does not exist/.test(err.message) ? refuse(554, '5.6.0', oneLine(err.message)) : CONFIG_MISSING),
  template_not_found: permanent(554, '5.6.0'),
  message_not_found: undefined,
  conflict: undefined,
  idempotency_conflict: () => refuse(451, '4.3.0', 'The same message is being accepted on another connection; try again'),
  payload_too_large: (err) => refuse(552, '5.3.4', oneLine(err.message)),
  attachment_too_large: (err) => refuse(552, '5.3.4', oneLine(err.message)),
  invalid_template_params: (err) => refuse(554, '5.6.0', paramsText(err)),
  template_render_failed: permanent(554, '5.6.0'),
  invalid_recipient: (err) => {
    const reason = err.details?.reason;
    if (reason === 'simulator_mixed') return refuse(550, '5.7.1', oneLine(err.message));
    if (reason === 'unknown_simulator_address') return refuse(550, '5.1.1', oneLine(`Recipient refused: ${err.message}`));
    return refuse(553, '5.1.3', oneLine(`Bad recipient address: ${err.message}`));
  },
  service_unavailable_for_template: () => CONFIG_MISSING,
  sender_not_configured: () => CONFIG_MISSING,
  rate_limited: (err) => refuse(451, '4.7.1', oneLine(err.message)),
  test_send_limit: (err) => refuse(451, '4.7.1', oneLine(err.message)),
  recipient_suppressed: (err) => refuse(550, '5.1.1', oneLine(`Recipient refused: ${err.message}`)),
  internal_error: undefined,
  provider_error: undefined,
  service_unavailable: undefined,
};

/** The reply for an error of the send path; `known` false: the caller logs it (a bug or an outage). */
export function replyFor(err: unknown): { reply: SmtpRefusal; known: boolean } {
  if (storageTrouble(err) !== undefined) return { reply: TEMPORARY, known: true };
  if (isApiError(err)) {
    const rule = REPLIES[err.code];
    if (rule !== undefined) return { reply: rule(err), known: true };
    return { reply: TEMPORARY, known: err.code === 'service_unavailable' };
  }
  return { reply: TEMPORARY, known: false };
}

/** The part of smtp-server's connection we wrap (public and typed in smtp-connection.d.ts). */
export interface Sender {
  send(code: number, data?: string | string[] | null, context?: string | false): void;
}

const OURS = /^[245]\.\d{1,3}\.\d{1,3} /;

/**
 * Makes the connection print our enhanced codes: a text that starts with one (every reply of
 * ours, refusalError) is sent with `context = false`, so the library adds none of its own; its own
 * 538 becomes 5.7.11 (RFC 3207 names no code; 5.7.11 "encryption required", RFC 5248), its
 * DATA_OK 250 never happens (ours carries 2.0.0). Everything else keeps the library's table,
 * which is right for its own replies (530 5.7.0, 452 4.5.3, 503 5.5.1...).
 */
export function ownEnhancedCodes(connection: Sender): void {
  const send = connection.send.bind(connection);
  connection.send = (code, data, context) => {
    if (typeof data === 'string' && OURS.test(data)) return send(code, data, false);
    if (code === 538) return send(code, `${TLS_FIRST.enhanced} ${TLS_FIRST.text}`, false);
    return send(code, data, context);
  };
}
