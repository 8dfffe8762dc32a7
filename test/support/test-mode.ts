import type { BlobStore } from '../../src/blobs/blob-store.js';
import { diskBlobStore } from '../../src/blobs/disk.js';
import type { DeliveryReceipt, OutgoingEmail, TransportFactory } from '../../src/delivery/transport.js';
import { rawComposer, type RawMessage } from '../../src/delivery/transports/raw-mime.js';
import { createSandbox } from '../../src/delivery/transports/sandbox.js';
import { canonicalAddress } from '../../src/domain/addresses.js';
import { ManualClock } from '../../src/domain/clock.js';
import { newSortableId, sha256 } from '../../src/domain/ids.js';
import type { KeyMode } from '../../src/domain/types.js';
import type { Store } from '../../src/storage/store.js';
import type { RenderedEmail } from '../../src/templates/render.js';
import { type Closer, tempDir } from './cleanup.js';

/**
 * Test mode (issue 27): messages inserted as the send path's transaction writes them, of either
 * mode, simulated or not; captures made by the sandbox transport itself; a disk blob store of the
 * test's own, a composer that keeps what it composed, and transports that record any call (the
 * sandbox path must make none).
 */

export interface ModeMessage {
  /** ann@example.com when not given. */
  to?: string[];
  cc?: string[];
  bcc?: string[];
  subject?: string;
  mode?: KeyMode;
  simulated?: boolean;
  createdAt: number;
  org?: string;
  template?: string;
  status?: 'queued' | 'held';
  attachment?: { filename: string; contentType: string; content: Buffer };
}

function emailOf(m: ModeMessage): RenderedEmail {
  const list = (xs: readonly string[] | undefined) => (xs ?? []).map((address) => ({ name: '', address }));
  return {
    subject: m.subject ?? 'Welcome aboard',
    from: { name: 'Acme', address: 'noreply@acme.test' },
    reply_to: [],
    to: list(m.to ?? ['ann@example.com']),
    cc: list(m.cc),
    bcc: list(m.bcc),
    html: '<p>Hello <b>there</b></p>',
    text: 'Hello there',
  };
}

/** The status token insertModeMessage gives a message (its hash is stored). */
export const tokenOf = (id: string): string => `token-${id}`;

/**
 * A message of `acme`/`outbox` (or `m.org`) as the send path writes it: sortable id, canonical
 * recipient rows, no credit taken (a test or simulator send takes none), its attachment stored.
 */
export async function insertModeMessage(store: Store, blobs: BlobStore | undefined, m: ModeMessage): Promise<string> {
  const e = emailOf(m);
  const id = newSortableId('msg', m.createdAt);
  const org = m.org ?? 'acme';
  let attachments: string | null = null;
  if (m.attachment !== undefined) {
    if (blobs === undefined) throw new Error('an attachment needs a blob store');
    const key = `${org}/att_${id}`;
    await blobs.put(key, m.attachment.content, m.attachment.contentType);
    const { filename, contentType, content } = m.attachment;
    attachments = JSON.stringify([{ blob_key: key, filename, content_type: contentType, size: content.length }]);
  }
  const rows = (kind: 'to' | 'cc' | 'bcc', list: RenderedEmail['to']) =>
    list.map((a) => ({ kind, email: canonicalAddress(a.address) }));
  await store.transaction((tx) =>
    tx.messages.insert({
      id,
      org_id: org,
      template_id: m.template ?? 'contact',
      service_id: 'outbox',
      status: m.status ?? 'queued',
      status_token_hash: sha256(tokenOf(id)),
      key_type: 'private',
      content: JSON.stringify(e),
      subject: e.subject,
      header_message_id: `<${id}@mailroom.test>`,
      attachments,
      credit_taken: false,
      idempotency_key: null,
      recipients: [...rows('to', e.to), ...rows('cc', e.cc), ...rows('bcc', e.bcc)],
      created_at: m.createdAt,
      mode: m.mode ?? 'live',
      simulated: m.simulated ?? false,
    }),
  );
  return id;
}

/**
 * Captures a stored test message through the sandbox transport, as the worker hands it over
 * (the read side tested on its own). Returns the composed bytes the inbox must give back unchanged.
 */
export async function captureMessage(store: Store, blobs: BlobStore, id: string, now: number, org = 'acme'): Promise<Buffer> {
  const message = await store.messages.get(org, id);
  const content = await store.messages.content(id);
  if (message === undefined || content === undefined) throw new Error(`no message ${id}`);
  const email = JSON.parse(content.content) as RenderedEmail;
  const refs = JSON.parse(content.attachments ?? '[]') as Array<{ blob_key: string; filename: string; content_type: string }>;
  const attachments = await Promise.all(
    refs.map(async (r) => ({ filename: r.filename, contentType: r.content_type, content: await blobs.get(r.blob_key) })),
  );
  const composer = keepingComposer();
  const sandbox = createSandbox({
    store,
    blobs,
    clock: new ManualClock(now),
    simulatorDelayMs: 60_000,
    compose: composer.compose,
  });
  await sandbox.send({
    messageId: id,
    headerMessageId: message.header_message_id,
    email,
    attachments,
    mode: 'test',
    orgId: org,
    createdAt: message.created_at,
  });
  await sandbox.close();
  composer.close();
  const raw = composer.composed[0];
  if (raw === undefined) throw new Error(`message ${id} was captured before`);
  return raw.bytes;
}

export function testBlobs(closer: Closer): BlobStore {
  return diskBlobStore({ root: tempDir(closer, 'mailroom-blobs-'), baseUrl: 'http://mailroom.test', secret: 'blob-secret' });
}

/** rawComposer, keeping every composition (the bytes the inbox must hold, byte for byte). */
export function keepingComposer(): {
  compose: (mail: OutgoingEmail) => Promise<RawMessage>;
  composed: RawMessage[];
  close: () => void;
} {
  const inner = rawComposer();
  const composed: RawMessage[] = [];
  return {
    composed,
    compose: async (mail) => {
      const raw = await inner.compose(mail);
      composed.push(raw);
      return raw;
    },
    close: () => inner.close(),
  };
}

/** Transports for every provider the org could use, recording each call: the sandbox path must make none. */
export function refusingTransports(calls: string[]): Readonly<Record<string, TransportFactory>> {
  const factory: TransportFactory = (service) => ({
    send: async (mail): Promise<DeliveryReceipt> => {
      calls.push(`${service.provider}:${mail.messageId}`);
      return { response: '250 should not be here' };
    },
    close: async () => undefined,
  });
  return { outbox: factory, smtp: factory };
}

/** The message's timeline types, oldest first. */
export async function timeline(store: Store, id: string): Promise<string[]> {
  return (await store.messages.events(id)).map((e) => e.type);
}
