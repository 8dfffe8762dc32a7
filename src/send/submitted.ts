import { blockedReason, cleanFilename, PLAN_ATTACHMENT_LIMIT } from '../attachments/policy.js';
import { asciiDomain } from '../domain/addresses.js';
import type { Caller } from '../domain/caller.js';
import type { ClientInfo } from '../domain/client.js';
import { newSortableId } from '../domain/ids.js';
import type { Service } from '../domain/types.js';
import { ApiError } from '../errors/api-error.js';
import { parseContentType, parseEntity, walk, type Part, type WalkBudget } from '../inbound/mime.js';
import { mimeParameter } from '../mime/encoded-words.js';
import { decodedHeaderText, fieldValues, mailboxes, rewriteHead, rfc5322Date, type Head, type Mailbox } from '../mime/head.js';
import type { RenderedEmail } from '../templates/render.js';
import type { SendDeps } from './accept.js';
import type { Prepared } from './persist.js';
import { checkLists, checkSimulatorRecipients } from './recipient-rules.js';
import { serviceByIdOrDefault } from './render-step.js';
import { SUBMITTED_TEMPLATE_ID } from '../domain/template-id.js';

/**
 * Raw mode of SMTP submission (issue 28): the first half of the send path for a message sent as
 * submitted, the counterpart of accept.ts#prepare for a rendered template. Rate limits, service,
 * the sender rule (L7), the attachment policy on the submitted parts, the simulator and list
 * rules, then the bytes to store: the submission without Bcc and X-Mailroom-*, plus Message-ID
 * and Date where missing. Nothing else of the message is touched.
 */

/** Removed before delivery: Bcc (the envelope carries those recipients) and our own instructions. */
export const dropOnDelivery = (lower: string): boolean => lower === 'bcc' || lower.startsWith('x-mailroom-');

/** The stored summary: a RenderedEmail (stored.ts reads it as any) marked as submitted. */
type SubmittedSummary = RenderedEmail & { submitted: true };

interface SubmittedInput {
  caller: Caller;
  client: ClientInfo;
  recipients: readonly string[];
  mime: Buffer;
  head: Head;
  from: Mailbox;
  /** The submitted Message-ID field's value, bracketed (submission.ts), when there is one. */
  keptMessageId: string | undefined;
}

export async function prepareSubmitted(deps: SendDeps, s: SubmittedInput): Promise<Prepared> {
  const { org, key } = s.caller;
  if (key.type !== 'private') throw new ApiError('private_key_required');
  // Counted as a private-key send (issue: "rate limits counted as a private-key send").
  await deps.protection.limits.countRequest(s.caller, s.client);
  const service = await serviceByIdOrDefault(deps.store, org, headerOf(s.head, 'x-mailroom-service'));
  checkSender(service, s.from);
  checkSubmittedAttachments(org.plan, s.mime);
  const email: SubmittedSummary = {
    subject: decodedHeaderText(fieldValues(s.head, 'subject')[0] ?? ''),
    from: s.from,
    reply_to: fieldValues(s.head, 'reply-to').flatMap(mailboxes),
    to: s.recipients.map((address) => ({ name: '', address })),
    cc: [],
    bcc: [],
    html: '',
    text: '',
    submitted: true,
  };
  const sim = checkSimulatorRecipients(email, key.mode);
  await checkLists(deps.store, org, email, {}, sim);
  const now = deps.clock.now();
  const messageId = newSortableId('msg', now);
  const headerMessageId = s.keptMessageId ?? `<${messageId}@${deps.messageIdHost}>`;
  const added = [
    ...(s.keptMessageId === undefined ? [`Message-ID: ${headerMessageId}`] : []),
    ...(fieldValues(s.head, 'date').length === 0 ? [`Date: ${rfc5322Date(now)}`] : []),
  ];
  return {
    templateId: SUBMITTED_TEMPLATE_ID,
    service,
    email,
    charge: undefined,
    attachments: [],
    simulated: sim.simulated.length > 0,
    messageId,
    headerMessageId,
    // A blank Message-ID field (kept as undefined) goes too: ours replaces it, never beside it.
    mime: rewriteHead(s.mime, s.head, (l) => dropOnDelivery(l) || (s.keptMessageId === undefined && l === 'message-id'), added),
  };
}

/** A field's first value as text (unfolded, decoded), or undefined when absent or blank. */
export function headerOf(head: Head, name: string): string | undefined {
  const v = fieldValues(head, name)[0];
  const text = v === undefined ? '' : decodedHeaderText(v);
  return text === '' ? undefined : text;
}

/** A refusal of the message's own shape (contract: details.reason), one line fit for an SMTP reply. */
export function shapeError(reason: 'malformed_message' | 'sender_not_allowed' | 'template_headers', message: string): ApiError {
  return new ApiError('invalid_body', { message, details: { reason } });
}

/**
 * L7: with `from_email` on the service, the From domain must be that domain or under it (an
 * unverified From at SES or Postmark is a *service* error there and would hold the message
 * instead of telling the application); without one, any From.
 */
function checkSender(service: Pick<Service, 'settings'>, from: Mailbox): void {
  const configured = service.settings.from_email;
  if (typeof configured !== 'string' || configured === '') return;
  const allowed = asciiDomain(configured.slice(configured.lastIndexOf('@') + 1));
  const domain = asciiDomain(from.address.slice(from.address.lastIndexOf('@') + 1));
  if (allowed !== undefined && domain !== undefined && (domain === allowed || domain.endsWith(`.${allowed}`))) return;
  throw shapeError(
    'sender_not_allowed',
    `Sender address ${from.address} not allowed for this service (its domain must be ${allowed ?? configured}).`,
  );
}

/**
 * A part that is a file: named (Content-Disposition's `filename`, else Content-Type's `name`, in
 * any RFC 2231 or 2047 form), or `attachment`, or any leaf that is no text, multipart or message.
 */
function fileName(part: Part): string | undefined {
  const disposition = parseContentType(part.headers.get('content-disposition'));
  const named = mimeParameter(disposition.params, 'filename') ?? mimeParameter(part.params, 'name');
  if (named !== undefined) return cleanFilename(named);
  // parseContentType reads an absent field as text/plain: only a given `attachment` counts.
  if (part.headers.get('content-disposition') !== undefined && disposition.type === 'attachment') return 'attachment';
  const type = part.contentType;
  return type.startsWith('text/') || type.startsWith('multipart/') || type.startsWith('message/') ? undefined : 'attachment';
}

interface SubmittedFile {
  name: string;
  /** Transfer-decoded. */
  body: Buffer;
}

/**
 * The files of a submitted message. The walker is the inbound one (depth 5, 50 parts); a message
 * it cannot read to the end is refused (attachments_not_allowed), because the parts it did not
 * walk would be delivered unchecked, byte for byte.
 */
export function submittedFiles(mime: Buffer): SubmittedFile[] {
  const budget: WalkBudget = { parts: 0, truncated: false };
  const root = parseEntity(mime, 0, budget);
  if (budget.truncated) {
    throw new ApiError('attachments_not_allowed', {
      message: 'Attachment check refused: the message nests more than 5 multipart levels or has more than 50 parts.',
      details: { reason: 'mime_structure' },
    });
  }
  const files: SubmittedFile[] = [];
  for (const part of walk(root)) {
    const name = part.parts.length > 0 ? undefined : fileName(part);
    if (name !== undefined) files.push({ name, body: part.body });
  }
  return files;
}

/**
 * The API's attachment rules on the submitted parts (src/attachments/resolve.ts): none on a plan
 * without an allowance (free: 0 bytes), no blocked type by name or by content, and the plan's
 * total of decoded bytes, which it returns.
 */
export function checkSubmittedAttachments(plan: keyof typeof PLAN_ATTACHMENT_LIMIT, mime: Buffer): number {
  const limit = PLAN_ATTACHMENT_LIMIT[plan];
  let total = 0;
  for (const file of submittedFiles(mime)) {
    if (limit === 0) {
      throw new ApiError('attachments_not_allowed', {
        message: 'Attachment refused: the plan has no attachment allowance.',
        details: { reason: 'plan' },
      });
    }
    const blocked = blockedReason(file.name, file.body);
    if (blocked !== undefined) {
      throw new ApiError('attachments_not_allowed', {
        message: `Attachment refused: ${file.name}: ${blocked}.`,
        details: { reason: 'file_type', filename: file.name },
      });
    }
    total += file.body.length;
  }
  if (total > limit) {
    throw new ApiError('attachment_too_large', {
      message: `Attachments total ${total} bytes; the plan allows ${limit}.`,
      details: { limit, size: total },
    });
  }
  return total;
}
