import type { AttachmentRef } from '../attachments/resolve.js';
import type { BlobStore } from '../blobs/blob-store.js';
import type { RenderedEmail } from '../templates/render.js';
import { DeliveryError, type OutgoingEmail } from './transport.js';

/**
 * What the worker needs of one claimed message's stored content, or why it cannot be had. A
 * message whose content cannot be read can never be sent, however often it is tried: it must
 * fail on its own instead of taking the rest of its batch down with it.
 */
export type StoredContent =
  | { ok: true; email: RenderedEmail; attachments: StoredAttachment[]; submitted: boolean }
  | { ok: false; reason: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isAddress = (v: unknown): boolean => isObject(v) && typeof v.address === 'string';
const isAddressList = (v: unknown): boolean => Array.isArray(v) && v.every(isAddress);
/** What the worker reads of an AttachmentRef that message_contents keeps: the blob, its name and type. */
export type StoredAttachment = Pick<AttachmentRef, 'blob_key' | 'filename'> & { content_type?: string | null };
const isStoredAttachment = (v: unknown): v is StoredAttachment =>
  isObject(v) &&
  typeof v.blob_key === 'string' &&
  typeof v.filename === 'string' &&
  (v.content_type === undefined || v.content_type === null || typeof v.content_type === 'string');

/**
 * The fields every later step reads without checking (recipients, sender, subject, bodies). A
 * row the send path wrote always has them; a row without them was damaged since. `{}` is what
 * a claim yields for a message whose content row is missing.
 */
function shapeProblem(v: unknown): string | undefined {
  if (!isObject(v)) return 'is not an object';
  for (const list of ['to', 'cc', 'bcc', 'reply_to'] as const) if (!isAddressList(v[list])) return `has no valid "${list}" list`;
  if (!isAddress(v.from)) return 'has no valid "from"';
  for (const text of ['subject', 'html', 'text'] as const) if (typeof v[text] !== 'string') return `has no "${text}" text`;
  return undefined;
}

function parse(json: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(json) };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

/** A message's stored email and attachment list (message_contents), read and checked. */
export function readStoredContent(content: string, attachments: string | null): StoredContent {
  const email = parse(content);
  if (!email.ok) return { ok: false, reason: `the stored content is not valid JSON (${email.error}); it can never be sent` };
  const problem = shapeProblem(email.value);
  if (problem !== undefined) return { ok: false, reason: `the stored content ${problem}; it can never be sent` };
  const refs = attachmentRefs(attachments);
  if (refs === undefined) return { ok: false, reason: 'the stored attachment list is unreadable; it can never be sent' };
  // A submitted message (SMTP, issue 28) stores a summary marked `"submitted": true`: its bytes
  // are in message_contents.mime, read per attempt (deliver.ts).
  const submitted = isObject(email.value) && email.value.submitted === true;
  return { ok: true, email: email.value as RenderedEmail, attachments: refs, submitted };
}

/** A stored attachment list (message_contents.attachments, JSON), or undefined if unreadable. */
export function attachmentRefs(json: string | null): StoredAttachment[] | undefined {
  if (json === null) return [];
  const refs = parse(json);
  if (!refs.ok || !Array.isArray(refs.value)) return undefined;
  return refs.value.every(isStoredAttachment) ? refs.value : undefined;
}

/** The message's attachment bytes from the blob store; a missing blob is a permanent failure. */
export async function loadAttachments(
  blobs: BlobStore | undefined,
  refs: readonly StoredAttachment[],
): Promise<OutgoingEmail['attachments']> {
  if (refs.length === 0) return [];
  if (blobs === undefined) throw new DeliveryError('permanent', 'this worker has no blob store for the message attachments');
  return Promise.all(
    refs.map(async (a) => {
      const content = await blobs.get(a.blob_key).catch(() => {
        throw new DeliveryError('permanent', `attachment ${a.filename} is missing from the blob store`);
      });
      return { filename: a.filename, contentType: a.content_type ?? undefined, content };
    }),
  );
}
