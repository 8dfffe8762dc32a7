import { blockedReason, cleanFilename, PLAN_ATTACHMENT_LIMIT } from '../attachments/policy.js';
import { asciiDomain } from '../domain/addresses.js';
import type { Caller } from '../domain/caller.js';
import type { ClientInfo } from '../domain/client.js';
import { newSortableId } from '../domain/ids.js';
import type { Service } from '../domain/types.js';
import { ApiError } from '../errors/api-error.js';
import { parseEntity, walk, type Part } from '../inbound/mime.js';
import type { RenderedEmail } from '../templates/render.js';
import type { SendDeps } from './accept.js';
import {
  fieldValues,
  headerText,
  mailboxes,
  prependFields,
  rfc5322Date,
  withoutFields,
  type Head,
  type Mailbox,
} from './mime-head.js';
import type { Prepared } from './persist.js';
import { checkLists, checkSimulatorRecipients } from './recipient-rules.js';
import { serviceByIdOrDefault } from './render-step.js';

/**
 * Raw mode of SMTP submission (issue 28): the first half of the send path for a message sent as
 * submitted, the counterpart of accept.ts#prepare for a rendered template. Rate limits, service,
 * the sender rule (L7), the attachment policy on the submitted parts, the simulator and list
 * rules, then the bytes to store: the submission without Bcc and X-Mailroom-*, plus Message-ID
 * and Date where missing. Nothing else of the message is touched.
 */

/** What a submitted message is stored as in history (`template_id`), lead's decision L5; template ids never start with `@`. */
export const SUBMITTED_TEMPLATE_ID = '@smtp';

/** Removed before delivery: Bcc (the envelope carries those recipients) and our own instructions. */
export const dropOnDelivery = (lower: string): boolean => lower === 'bcc' || lower.startsWith('x-mailroom-');

/** The stored summary: a RenderedEmail (stored.ts reads it as any) marked as submitted. */
export type SubmittedSummary = RenderedEmail & { submitted: true };

export interface SubmittedInput {
  caller: Caller;
  client: ClientInfo;
  recipients: readonly string[];
  mime: Buffer;
  head: Head;
  from: Mailbox;
  /** The submitted Message-ID field's value as written, when there is one. */
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
    subject: headerText(fieldValues(s.head, 'subject')[0] ?? ''),
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
    headerMessageId: bracketed(headerMessageId),
    // A blank Message-ID field (kept as undefined) goes too: ours replaces it, never beside it.
    mime: prependFields(
      withoutFields(s.mime, s.head, (l) => dropOnDelivery(l) || (s.keptMessageId === undefined && l === 'message-id')),
      added,
      s.head.eol,
    ),
  };
}

/** A field's first value as text (unfolded, decoded), or undefined when absent or blank. */
export function headerOf(head: Head, name: string): string | undefined {
  const v = fieldValues(head, name)[0];
  const text = v === undefined ? '' : headerText(v);
  return text === '' ? undefined : text;
}

/** `<id@host>` as stored in header_message_id (provider events match it), whatever the submission's spacing. */
export const bracketed = (id: string): string => {
  const inner = id.trim().replace(/^<|>$/g, '');
  return `<${inner}>`;
};

/**
 * L7: with `from_email` on the service, the From domain must be that domain or under it (an
 * unverified From at SES or Postmark is a *service* error there and would hold the message
 * instead of telling the application); without one, any From.
 */
export function checkSender(service: Pick<Service, 'settings'>, from: Mailbox): void {
  const configured = service.settings.from_email;
  if (typeof configured !== 'string' || configured === '') return;
  const allowed = asciiDomain(configured.slice(configured.lastIndexOf('@') + 1));
  const domain = asciiDomain(from.address.slice(from.address.lastIndexOf('@') + 1));
  if (allowed !== undefined && domain !== undefined && (domain === allowed || domain.endsWith(`.${allowed}`))) return;
  throw new ApiError('invalid_body', {
    message: `Sender address ${from.address} not allowed for this service (its domain must be ${allowed ?? configured}).`,
    details: { reason: 'sender_not_allowed', from: from.address },
  });
}

/** A part that is a file: named, or `attachment`, or any leaf that is no text, multipart or message. */
function fileName(part: Part): string | undefined {
  const disposition = part.headers.get('content-disposition') ?? '';
  const named = /\bfilename\s*=\s*("(?:[^"\\]|\\.)*"|[^;\s]+)/i.exec(disposition)?.[1] ?? part.params.name;
  if (named !== undefined) return cleanFilename(headerText(named.replace(/^"(.*)"$/s, '$1')));
  if (/^\s*attachment\b/i.test(disposition)) return 'attachment';
  const type = part.contentType;
  return type.startsWith('text/') || type.startsWith('multipart/') || type.startsWith('message/') ? undefined : 'attachment';
}

/**
 * The API's attachment rules on the submitted parts (src/attachments/resolve.ts): none on a plan
 * without an allowance (free: 0 bytes), no blocked type by name or by content, and the plan's
 * total of decoded bytes. The walker is the inbound one (depth 5, 50 parts).
 */
export function checkSubmittedAttachments(plan: keyof typeof PLAN_ATTACHMENT_LIMIT, mime: Buffer): number {
  const limit = PLAN_ATTACHMENT_LIMIT[plan];
  const root = parseEntity(mime);
  let total = 0;
  for (const part of walk(root)) {
    const name = part.parts.length > 0 ? undefined : fileName(part);
    if (name === undefined) continue;
    if (limit === 0) {
      throw new ApiError('attachments_not_allowed', {
        message: 'Attachment refused: the plan has no attachment allowance.',
        details: { reason: 'plan' },
      });
    }
    const blocked = blockedReason(name, part.body);
    if (blocked !== undefined) {
      throw new ApiError('attachments_not_allowed', {
        message: `Attachment refused: ${name}: ${blocked}.`,
        details: { reason: 'file_type', filename: name },
      });
    }
    total += part.body.length;
  }
  if (total > limit) {
    throw new ApiError('attachment_too_large', {
      message: `Attachments total ${total} bytes; the plan allows ${limit}.`,
      details: { limit, size: total },
    });
  }
  return total;
}
