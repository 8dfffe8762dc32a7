import type { BlobStore } from '../blobs/blob-store.js';
import { newId } from '../domain/ids.js';
import type { Organization, Template } from '../domain/types.js';
import { ApiError } from '../errors/api-error.js';
import { blobStoreUnavailable } from '../errors/unavailable.js';
import type { Store } from '../storage/store.js';
import type { AttachmentInput } from './input.js';
import { PLAN_ATTACHMENT_LIMIT, blockedReason, cleanFilename } from './policy.js';

/** What a message keeps of each attachment (message_contents.attachments, JSON). */
export interface AttachmentRef {
  blob_key: string;
  filename: string;
  content_type: string | null;
  size: number;
}

const BASE64 = /^[A-Za-z0-9+/\r\n]*={0,2}[\r\n]*$/;

const invalid = (field: string, message: string) =>
  new ApiError('invalid_body', { message: `${field} ${message}.`, details: { fields: [{ field, message }] } });

/**
 * Checks a send's attachments and stores their bytes as blobs owned by the message: inline
 * items are decoded; uploaded items must be this organization's, uploaded, unexpired and of
 * their signed size, and are copied (an upload expires after 24 h; a message may wait longer
 * in the queue). Every file is judged by its name and its bytes. Nothing is stored unless all
 * pass; the caller deletes the returned blobs if the send is not accepted after all.
 */
export async function storeAttachments(
  deps: { store: Store; blobs: BlobStore; now: number },
  org: Organization,
  template: Template,
  items: readonly AttachmentInput[],
): Promise<AttachmentRef[]> {
  if (items.length === 0) return [];
  if (!template.allow_attachments)
    throw new ApiError('attachments_not_allowed', {
      message: 'This template does not accept attachments.',
      details: { reason: 'template' },
    });
  const limit = PLAN_ATTACHMENT_LIMIT[org.plan];
  if (limit === 0)
    throw new ApiError('attachments_not_allowed', {
      message: 'The plan has no attachment allowance.',
      details: { reason: 'plan' },
    });

  const files: Array<{ filename: string; content_type: string | null; bytes: Buffer }> = [];
  let total = 0;
  for (const [i, item] of items.entries()) {
    const field = `attachments.${i}`;
    let file: { filename: string; content_type: string | null; bytes: Buffer };
    if ('upload_id' in item) {
      // The bytes decide whether an upload is finished: with S3 the client's PUT never reaches
      // this service, so the blob's presence at its signed size is the only proof.
      const upload = await deps.store.uploads.get(org.id, item.upload_id);
      if (upload === undefined || upload.expires_at <= deps.now)
        throw invalid(`${field}.upload_id`, 'names no unexpired upload of this organization');
      const bytes = await deps.blobs.get(upload.blob_key).catch(() => undefined);
      if (bytes === undefined || bytes.length !== upload.size)
        throw invalid(`${field}.upload_id`, `was not uploaded with its declared size of ${upload.size} bytes`);
      file = { filename: upload.filename, content_type: upload.content_type, bytes };
    } else if ('bytes' in item) {
      file = { filename: cleanFilename(item.filename), content_type: item.content_type ?? null, bytes: item.bytes };
    } else {
      if (!BASE64.test(item.content_base64)) throw invalid(`${field}.content_base64`, 'is not base64');
      file = {
        filename: cleanFilename(item.filename),
        content_type: item.content_type ?? null,
        bytes: Buffer.from(item.content_base64, 'base64'),
      };
    }
    const blocked = blockedReason(file.filename, file.bytes);
    if (blocked !== undefined)
      throw new ApiError('attachments_not_allowed', {
        message: blocked,
        details: { reason: 'file_type', filename: file.filename },
      });
    total += file.bytes.length;
    files.push(file);
  }
  if (total > limit) {
    throw new ApiError('attachment_too_large', {
      message: `Attachments total ${total} bytes; the plan allows ${limit}.`,
      details: { limit, size: total },
    });
  }
  const refs: AttachmentRef[] = [];
  for (const f of files) {
    const blob_key = `${org.id}/${newId('att')}`;
    await deps.blobs.put(blob_key, f.bytes, f.content_type ?? undefined).catch((err: unknown) => {
      throw blobStoreUnavailable(err);
    });
    refs.push({ blob_key, filename: f.filename, content_type: f.content_type, size: f.bytes.length });
  }
  return refs;
}
