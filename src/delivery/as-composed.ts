import { createHash } from 'node:crypto';
import type { BlobStore } from '../blobs/blob-store.js';
import { ApiError } from '../errors/api-error.js';
import type { StoredMessage } from '../storage/messages.js';
import type { Store } from '../storage/store.js';
import { capturedRaw, type RetentionSettings } from '../testmode/inbox.js';
import { submittedBytes } from './compose.js';
import { loadAttachments, readStoredContent } from './stored.js';
import { trackingHeaders, type TrackingHeaders } from './tracking-headers.js';
import type { RawComposer } from './transports/raw-mime.js';

/**
 * One message as composed for an SMTP relay (issue 29, message detail's raw source): the RFC
 * 5322 bytes the admin API's `…/messages/{id}/raw` downloads and `…/source` shows. Three cases:
 * - a test message already captured: the test inbox's bytes, exactly;
 * - a message submitted over SMTP (`@smtp`): its stored bytes (Bcc and X-Mailroom-* dropped,
 *   Message-ID and Date added at acceptance: send/submitted.ts) as compose.ts hands them to a relay;
 * - any other: composed now from the stored rendered email with the composer the sandbox and the
 *   raw-MIME APIs use (transports/raw-mime.ts: compose.ts#mailOptions, Bcc in the envelope only),
 *   with the stored Message-ID, `sent_at` (else the acceptance time) as Date, and a boundary
 *   derived from the message id, so the same message composes to the same bytes every time.
 * A live message bound to an SMTP relay whose events source reads a tracking header gets it, as
 * the relay transport adds it; DKIM-Signature is not added (it is made at each hand-off).
 */

export type SourceOrigin = 'captured' | 'submitted' | 'composed';

export interface ComposedMessage {
  bytes: Buffer;
  origin: SourceOrigin;
  /** SHA-256 of the bytes (hex): the raw download's ETag. */
  sha256: string;
}

export interface AsComposedDeps {
  store: Store;
  blobs: BlobStore;
  composer: Pick<RawComposer, 'compose'>;
  now: number;
  config: RetentionSettings;
}

/** What cannot be composed is answered in the error envelope, never as a 500. */
const unavailable = (why: string) =>
  new ApiError('message_not_found', {
    message: `The message cannot be shown as composed: ${why}.`,
    details: { reason: 'content_unavailable' },
  });

const digest = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const done = (bytes: Buffer, origin: SourceOrigin): ComposedMessage => ({ bytes, origin, sha256: digest(bytes) });
const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The tracking header the SMTP relay transport adds (transports/smtp.ts#optionsOf) for a live
 * message through an SMTP relay service; the sandbox (test and simulated messages) and the API
 * transports add none.
 */
async function relayHeaders(store: Store, m: StoredMessage): Promise<TrackingHeaders> {
  if (m.mode === 'test' || m.simulated) return {};
  const service = await store.catalog.service(m.org_id, m.service_id);
  return service?.provider === 'smtp' ? trackingHeaders(service.settings, m.id) : {};
}

/** The message as composed for an SMTP relay; the caller has checked it is the organization's and readable. */
export async function messageAsComposed(deps: AsComposedDeps, m: StoredMessage): Promise<ComposedMessage> {
  if (m.mode === 'test') {
    const captured = await capturedRaw(deps, m.org_id, m.id);
    if (captured !== undefined) return { bytes: captured.bytes, origin: 'captured', sha256: captured.sha256 };
  }
  const row = await deps.store.messages.content(m.id);
  if (row === undefined) throw unavailable('its content is no longer stored');
  const stored = readStoredContent(row.content, row.attachments);
  if (!stored.ok) throw unavailable(stored.reason.replace(/; it can never be sent$/, ''));
  const headers = await relayHeaders(deps.store, m);
  if (stored.submitted) {
    const mime = await deps.store.messages.submittedMime(m.id);
    if (mime === undefined) throw unavailable('the submitted message has no stored bytes');
    return done(submittedBytes(mime, headers), 'submitted');
  }
  let attachments: Awaited<ReturnType<typeof loadAttachments>>;
  try {
    attachments = await loadAttachments(deps.blobs, stored.attachments);
  } catch (err) {
    throw unavailable(errorText(err));
  }
  try {
    const raw = await deps.composer.compose(
      { messageId: m.id, headerMessageId: m.header_message_id, email: stored.email, attachments },
      { date: new Date(m.sent_at ?? m.created_at), baseBoundary: digest(Buffer.from(m.id)).slice(0, 16), headers },
    );
    return done(raw.bytes, 'composed');
  } catch (err) {
    throw unavailable(`it could not be composed (${errorText(err)})`);
  }
}
