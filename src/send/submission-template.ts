import { ApiError, isApiError } from '../errors/api-error.js';
import { utf8OrLatin1 } from '../mime/encoded-words.js';
import { fieldValues, type Head } from '../mime/head.js';
import type { ParamIssue } from '../templates/params.js';
import { acceptSend, checkParamsSize, type SendDeps } from './accept.js';
import type { PersistContext, SendOutcome } from './persist.js';
import { headerOf, shapeError, submittedFiles } from './submitted.js';
import type { Submission } from './submission.js';

/**
 * Template mode of SMTP submission (issue 28): `X-Mailroom-Template: <id>` and
 * `X-Mailroom-Params: <JSON object>` make the message the template rendered with those
 * parameters, to the envelope's recipients (they replace the template's To, Cc and Bcc, as a
 * send test's address does), through the same send path as POST /v1/send: the same parameter
 * validation, dynamic-recipient lock, link and list rules. The submitted body is ignored; a
 * submission that carries files is refused rather than silently losing them.
 */

interface TemplateModeInput extends Submission, Pick<PersistContext, 'idempotency' | 'respond'> {
  head: Head;
  /** The submitted Message-ID, kept on the rendered message. */
  keptMessageId: string | undefined;
}

export async function acceptTemplateMode(deps: SendDeps, s: TemplateModeInput): Promise<SendOutcome> {
  const templateId = headerOf(s.head, 'x-mailroom-template') ?? '';
  const params = paramsOf(fieldValues(s.head, 'x-mailroom-params')[0]);
  // The API's 256 kB rule (MAX_PARAMS_BYTES), on the JSON as the API measures it. The field is
  // under 64 KiB (readHead), but JSON.stringify can be longer than its source: `1e20` (4 bytes)
  // becomes 21 digits, so a 64 KiB field of them stringifies to about 286 kB.
  checkParamsSize(params, 'X-Mailroom-Params');
  // A message that cannot be walked to the end is refused there (attachments_not_allowed).
  if (submittedFiles(s.mime).length > 0) {
    throw shapeError(
      'template_headers',
      'Template mode takes no attachments (X-Mailroom-Template is set and the message carries files).',
    );
  }
  try {
    return await acceptSend(deps, {
      caller: s.caller,
      client: s.client,
      input: {
        template_id: templateId,
        template_params: params,
        params_source: 'json',
        service_id: headerOf(s.head, 'x-mailroom-service'),
        turnstile_token: undefined,
        turnstile_key: undefined,
        attachments: [],
      },
      recipients: s.recipients,
      ...(s.keptMessageId !== undefined ? { headerMessageId: s.keptMessageId } : {}),
      idempotency: s.idempotency,
      respond: s.respond,
    });
  } catch (err) {
    throw isApiError(err) && err.code === 'invalid_template_params' ? withNamedParam(err) : err;
  }
}

/**
 * The field's value (unfolded, trimmed) as UTF-8 text, else latin1: nothing else is done to it,
 * as JSON is its own encoding (no RFC 2047 decoding: a value may read `=?utf-8?q?…?=`, and no
 * whitespace collapsed inside strings). Absent or blank → {}; anything but a JSON object →
 * invalid_body `template_headers`.
 */
function paramsOf(latin1: string | undefined): Record<string, unknown> {
  if (latin1 === undefined || latin1 === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(utf8OrLatin1(latin1));
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw shapeError('template_headers', 'X-Mailroom-Params is not a JSON object.');
  }
  return value as Record<string, unknown>;
}

/** The catalog's 422, its message naming the first bad parameter (one line, for the SMTP reply). */
function withNamedParam(err: ApiError): ApiError {
  const issues = Array.isArray(err.details?.issues) ? (err.details.issues as ParamIssue[]) : [];
  const [first] = issues;
  if (first === undefined) return err;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return new ApiError('invalid_template_params', {
    message: `Template parameter "${first.param}": ${first.message}${more}`.replace(/[\r\n]+/g, ' '),
    details: err.details ?? {},
  });
}
