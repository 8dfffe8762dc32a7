import type { BlobStore } from '../blobs/blob-store.js';
import { retentionCutoff, retentionDaysOf } from '../domain/retention.js';
import { ApiError } from '../errors/api-error.js';
import type { InboxEntry, InboxFilter } from '../storage/test-inbox.js';
import type { Store } from '../storage/store.js';
import { type HeaderField, parseHeaders } from './inbox-view.js';

/**
 * The captured test inbox (issue 27 §4) as plain functions: GET /v1/test-inbox (a test key) and
 * the admin API's …/test-inbox (the operator UI) both call these, with filters already parsed,
 * so neither imports the other. What is shown is what was captured: the headers come from the
 * stored bytes and the raw download is those bytes, never a recomposition.
 */

export interface RetentionSettings {
  retentionDays: number;
  testRetentionDays: number;
}

/** One captured message in a list. */
export interface InboxItem {
  message_id: string;
  template_id: string;
  subject: string | null;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  created_at: string;
  size: number;
  status: string;
  mode: 'test';
}

export interface InboxAttachment {
  filename: string;
  content_type: string | null;
  size: number | null;
}

/** One captured message with what its recipients would read. */
export interface InboxMessage extends InboxItem {
  sha256: string;
  captured_at: string;
  /** The header fields of the captured bytes, in order (Bcc never among them: it is in the envelope only). */
  headers: HeaderField[];
  html: string | null;
  text: string | null;
  attachments: InboxAttachment[];
}

const iso = (ms: number) => new Date(ms).toISOString();
const addresses = (e: InboxEntry, kind: 'to' | 'cc' | 'bcc') => e.recipients.filter((r) => r.kind === kind).map((r) => r.address);

export function inboxItem(e: InboxEntry): InboxItem {
  return {
    message_id: e.message_id,
    template_id: e.template_id,
    subject: e.subject,
    from: e.from_addr,
    to: addresses(e, 'to'),
    cc: addresses(e, 'cc'),
    bcc: addresses(e, 'bcc'),
    created_at: iso(e.created_at),
    size: e.size,
    status: e.status,
    mode: 'test',
  };
}

/** The earliest created_at a test message may have and still be shown (test retention, ≤ live). */
export function inboxCutoff(now: number, config: RetentionSettings): number {
  return retentionCutoff(now, retentionDaysOf('test', config));
}

/**
 * One page of an organization's inbox, newest first: `limit` entries and whether more follow
 * (one row more is read to tell). Nothing older than test retention is listed, purged yet or not.
 */
export async function listInbox(
  store: Store,
  orgId: string,
  filter: InboxFilter,
  limit: number,
  now: number,
  config: RetentionSettings,
): Promise<{ entries: InboxEntry[]; more: boolean }> {
  const cutoff = inboxCutoff(now, config);
  const rows = await store.testInbox.list(orgId, { ...filter, from: Math.max(cutoff, filter.from ?? cutoff) }, limit + 1);
  return { entries: rows.slice(0, limit), more: rows.length > limit };
}

const notFound = () => new ApiError('message_not_found');

/** A captured entry of this organization within test retention; else 404, as for an id that never existed. */
async function entryOf(store: Store, orgId: string, id: string, now: number, config: RetentionSettings): Promise<InboxEntry> {
  const entry = await store.testInbox.get(orgId, id);
  if (entry === undefined || entry.created_at < inboxCutoff(now, config)) throw notFound();
  return entry;
}

/** The captured bytes; a blob gone (purged between the row's read and this one) is a missing message. */
async function bytesOf(blobs: BlobStore, entry: InboxEntry): Promise<Buffer> {
  try {
    return await blobs.get(entry.blob_key);
  } catch {
    throw notFound();
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function parsed(json: string | null): unknown {
  if (json === null) return undefined;
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}

/**
 * The bodies and attachment list as stored at acceptance (message_contents): the rendered HTML
 * and text the bytes were composed from. A row damaged since shows none rather than failing
 * the page; the raw bytes are still there.
 */
function storedBodies(
  row: { content: string; attachments: string | null } | undefined,
): Pick<InboxMessage, 'html' | 'text' | 'attachments'> {
  const content = parsed(row?.content ?? null);
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
  const refs = parsed(row?.attachments ?? null);
  return {
    html: isObject(content) ? text(content.html) : null,
    text: isObject(content) ? text(content.text) : null,
    attachments: Array.isArray(refs)
      ? refs.filter(isObject).map((a) => ({
          filename: typeof a.filename === 'string' ? a.filename : '',
          content_type: typeof a.content_type === 'string' ? a.content_type : null,
          size: typeof a.size === 'number' ? a.size : null,
        }))
      : [],
  };
}

export async function inboxMessage(
  deps: { store: Store; blobs: BlobStore; now: number; config: RetentionSettings },
  orgId: string,
  id: string,
): Promise<InboxMessage> {
  const entry = await entryOf(deps.store, orgId, id, deps.now, deps.config);
  const [bytes, content] = await Promise.all([bytesOf(deps.blobs, entry), deps.store.messages.content(entry.message_id)]);
  return {
    ...inboxItem(entry),
    sha256: entry.sha256,
    captured_at: iso(entry.captured_at),
    headers: parseHeaders(bytes),
    ...storedBodies(content),
  };
}

/** The captured bytes as an SMTP relay would have received them, and their digest (the ETag). */
export async function inboxRaw(
  deps: { store: Store; blobs: BlobStore; now: number; config: RetentionSettings },
  orgId: string,
  id: string,
): Promise<{ bytes: Buffer; sha256: string; messageId: string }> {
  const entry = await entryOf(deps.store, orgId, id, deps.now, deps.config);
  return { bytes: await bytesOf(deps.blobs, entry), sha256: entry.sha256, messageId: entry.message_id };
}

/**
 * inboxRaw, or undefined where it answers 404: a test message not captured yet (still queued),
 * emptied from the inbox, or its blob gone. The admin API's raw source (delivery/as-composed.ts)
 * then composes it as the sandbox would.
 */
export async function capturedRaw(
  deps: { store: Store; blobs: BlobStore; now: number; config: RetentionSettings },
  orgId: string,
  id: string,
): Promise<{ bytes: Buffer; sha256: string; messageId: string } | undefined> {
  try {
    return await inboxRaw(deps, orgId, id);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'message_not_found') return undefined;
    throw err;
  }
}

/** Entries deleted per statement: a short transaction each, however large the inbox. */
const EMPTY_BATCH = 500;

/**
 * Empties an organization's inbox: rows first, in batches, then each batch's blobs, so no row
 * ever names a missing blob. A crash between, or a blob store refusing a delete, leaves an
 * orphan blob (no row names it, nothing reads it) rather than failing the request. The messages
 * themselves stay, with their timelines. Returns how many entries went.
 */
export async function emptyInbox(store: Store, blobs: BlobStore, orgId: string): Promise<number> {
  let removed = 0;
  for (;;) {
    const keys = await store.testInbox.deleteSome(orgId, EMPTY_BATCH);
    if (keys.length === 0) return removed;
    removed += keys.length;
    await Promise.all(keys.map((k) => blobs.delete(k).catch(() => undefined)));
  }
}
