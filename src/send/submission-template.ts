import { ApiError, isApiError } from '../errors/api-error.js';
import type { ParamIssue } from '../templates/params.js';
import { acceptSend, checkParamsSize, type SendDeps } from './accept.js';
import type { Head } from './mime-head.js';
import type { PersistContext, SendOutcome } from './persist.js';
import { checkSubmittedAttachments, headerOf } from './submitted.js';
import type { Submission } from './submission.js';

/**
 * Template mode of SMTP submission (issue 28): `X-Mailroom-Template: <id>` and
 * `X-Mailroom-Params: <JSON object>` make the message the template rendered with those
 * parameters, to the envelope's recipients (they replace the template's To, Cc and Bcc, as a
 * send test's address does), through the same send path as POST /v1/send: the same parameter
 * validation, dynamic-recipient lock, link and list rules. The submitted body is ignored; a
 * submission that carries files is refused rather than silently losing them.
 */

export interface TemplateModeInput extends Submission, Pick<PersistContext, 'idempotency' | 'respond'> {
  head: Head;
  /** The submitted Message-ID, kept on the rendered message. */
  keptMessageId: string | undefined;
}

export async function acceptTemplateMode(deps: SendDeps, s: TemplateModeInput): Promise<SendOutcome> {
  const templateId = headerOf(s.head, 'x-mailroom-template') ?? '';
  const params = paramsOf(headerOf(s.head, 'x-mailroom-params'));
  checkParamsSize(params, 'X-Mailroom-Params');
  if (hasFiles(s)) {
    throw new ApiError('invalid_body', {
      message: 'Template mode takes no attachments (X-Mailroom-Template is set and the message carries files).',
      details: { reason: 'template_headers' },
    });
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

/** Absent → {}; anything but a JSON object → invalid_body `template_headers`. */
function paramsOf(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError('invalid_body', {
      message: 'X-Mailroom-Params is not a JSON object.',
      details: { reason: 'template_headers' },
    });
  }
  return Object.fromEntries(Object.entries(value));
}

/** Whether the submission carries a file part (the raw mode's rule, on a plan that allows them all). */
function hasFiles(s: Submission): boolean {
  try {
    return checkSubmittedAttachments('business_200k', s.mime) > 0;
  } catch {
    // A blocked or oversized file is a file all the same.
    return true;
  }
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
