import { PLAN_ATTACHMENT_LIMIT } from '../attachments/policy.js';
import type { Caller } from '../domain/caller.js';
import type { ClientInfo } from '../domain/client.js';
import { sha256 } from '../domain/ids.js';
import type { Organization, Plan } from '../domain/types.js';
import { ApiError } from '../errors/api-error.js';
import type { StoredResponse } from '../storage/idempotency.js';
import type { RenderedEmail } from '../templates/render.js';
import { isEmailAddress } from '../templates/params.js';
import { AddressError, parseAddress } from '../templates/recipients.js';
import { classifyRecipients } from '../testmode/simulator.js';
import { bracketed, fieldValues, MAX_HEAD_BYTES, mailboxes, readHead } from '../mime/head.js';
import type { SendDeps } from './accept.js';
import { acceptPrepared, type SendOutcome } from './persist.js';
import { checkLists, checkSimulatorRecipients } from './recipient-rules.js';
import type { SendAccepted } from './request.js';
import { acceptTemplateMode } from './submission-template.js';
import { headerOf, prepareSubmitted, shapeError } from './submitted.js';

/**
 * SMTP submission's way into the send path (issue 28; the contract with the listener in
 * src/submission/): one RCPT TO checked, one DATA made a durable message. Everything between the
 * DATA bytes and the queue is here and in submitted.ts / submission-template.ts; the listener
 * only maps the ApiErrors thrown to SMTP replies.
 */

export interface Submission {
  /** A private key (live or test) and its organization, re-read by the listener at MAIL FROM. */
  caller: Caller;
  /** ip: the SMTP peer (IPv4-mapped IPv6 normalised); origin/referer/userAgent/secChUa undefined. */
  client: ClientInfo;
  /** The RCPT TO addresses the listener accepted, in order. */
  recipients: readonly string[];
  /** The DATA bytes as received (CRLF, dot-unstuffed, without the final "."). */
  mime: Buffer;
}

export interface SubmissionAccepted {
  messageId: string;
  status: 'queued' | 'held';
  replayed: boolean;
}

/**
 * Base64 as MIME writes it: 57 bytes → 76 characters + CRLF = 78 bytes per line (×1.37), so a
 * plan's 15 MiB of attachments take 21.5 MB in DATA.
 */
const encoded = (bytes: number): number => Math.ceil(bytes / 57) * 78;
/** Room for the bodies, as the API's: a send carries at most 256 kB of parameters besides its template. */
const BODY_ALLOWANCE = 256 * 1024;

/**
 * The most bytes a DATA may have for this organization: its plan's attachment allowance (as
 * base64 in MIME) plus 64 KiB of headers (MAX_HEAD_BYTES, the most readHead reads) and 256 KiB of bodies. Free: 327,680; starter:
 * 7,502,198; pro: 14,676,638; business plans: 21,851,156.
 */
export function submissionSizeLimit(org: Pick<Organization, 'plan'>): number {
  return sizeForPlan(org.plan);
}

const sizeForPlan = (plan: Plan): number => encoded(PLAN_ATTACHMENT_LIMIT[plan]) + MAX_HEAD_BYTES + BODY_ALLOWANCE;

/** The largest submissionSizeLimit over all plans: EHLO's SIZE. */
export const SUBMISSION_MAX_SIZE: number = Math.max(...Object.keys(PLAN_ATTACHMENT_LIMIT).map((p) => sizeForPlan(p as Plan)));

/** The stored answer of an accepted submission (replayed to a resubmission of its Message-ID). */
const respond = (a: SendAccepted): StoredResponse => ({ status: 250, headers: {}, body: JSON.stringify(a) });

/** DATA → one durable message (committed before it resolves). Throws ApiError for refusals. */
export async function acceptSubmission(deps: SendDeps, s: Submission): Promise<SubmissionAccepted> {
  // The listener bounds DATA as it reads (L8); checked again here, as the send path checks its own limits.
  const limit = submissionSizeLimit(s.caller.org);
  if (s.mime.length > limit) {
    throw new ApiError('payload_too_large', {
      message: `Message size exceeds the limit for this organization (${limit} bytes).`,
      details: { reason: 'message_size', limit },
    });
  }
  const head = readHead(s.mime);
  if (head === undefined) throw shapeError('malformed_message', 'Malformed message: no end of the header block within 64 KiB.');
  const fromFields = fieldValues(head, 'from');
  const from = fromFields.length === 1 ? mailboxes(fromFields[0] ?? '') : [];
  const [sender] = from;
  if (sender === undefined || from.length !== 1) {
    throw shapeError(
      'malformed_message',
      fromFields.length === 0 ? 'Malformed message: no From header.' : 'Malformed message: From must name exactly one mailbox.',
    );
  }
  // The API's address check (parseAddress): nodemailer's parser lets `a@`, `@b` and `a@b..com` through.
  if (!isEmailAddress(sender.address)) throw shapeError('malformed_message', 'Malformed message: From is not an address.');
  if (s.recipients.length === 0) throw new ApiError('invalid_recipient', { message: 'The message has no recipient.' });
  const kept = headerOf(head, 'message-id');
  const keptMessageId = kept === undefined ? undefined : bracketed(kept);
  // L6: the Message-ID alone is the key (the rule), digested to fit any length; the
  // digest is a constant, so a resubmission is always a replay, never a "different body".
  const idempotency = keptMessageId === undefined ? undefined : { key: `smtp:${sha256(keptMessageId)}`, digest: 'smtp' };
  let outcome: SendOutcome;
  if (headerOf(head, 'x-mailroom-template') !== undefined) {
    outcome = await acceptTemplateMode(deps, { ...s, head, keptMessageId, idempotency, respond });
  } else {
    outcome = await acceptPrepared(deps, { caller: s.caller, idempotency, respond }, () =>
      prepareSubmitted(deps, { ...s, head, from: sender, keptMessageId }),
    );
  }
  return acceptedOf(outcome);
}

function acceptedOf(outcome: SendOutcome): SubmissionAccepted {
  const body = JSON.parse(outcome.response.body) as Partial<SendAccepted>;
  if (typeof body.message_id !== 'string') throw new Error('a stored submission response has no message_id');
  return { messageId: body.message_id, status: body.status === 'held' ? 'held' : 'queued', replayed: outcome.replayed };
}

const asRecipients = (addresses: readonly string[]): RenderedEmail => ({
  subject: '',
  from: { name: '', address: '' },
  reply_to: [],
  to: addresses.map((address) => ({ name: '', address })),
  cc: [],
  bcc: [],
  html: '',
  text: '',
});

/**
 * RCPT TO: one address, given the ones already accepted in this transaction. invalid_recipient
 * (syntax and braces: details.reason 'syntax'; unknown simulator address; live key mixing simulator and
 * real), recipient_blocked, recipient_suppressed.
 */
export async function checkSubmissionRecipient(
  deps: SendDeps,
  caller: Caller,
  address: string,
  accepted: readonly string[],
): Promise<void> {
  try {
    // Template mode writes the envelope into the template's To, a Handlebars field (accept.ts).
    if (address.includes('{') || address.includes('}')) throw new AddressError('to', address, 'contains a brace');
    parseAddress('to', address);
  } catch (err) {
    if (!(err instanceof AddressError)) throw err;
    throw new ApiError('invalid_recipient', {
      message: `Bad recipient address syntax: ${address.slice(0, 200)} ${err.message}.`,
      details: { reason: 'syntax' },
    });
  }
  checkSimulatorRecipients(asRecipients([...accepted, address]), caller.key.mode);
  await checkLists(deps.store, caller.org, asRecipients([address]), {}, classifyRecipients([address]));
}
