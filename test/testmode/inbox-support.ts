import { createHash } from 'node:crypto';
import type { BlobStore } from '../../src/blobs/blob-store.js';
import { rawComposer } from '../../src/delivery/transports/raw-mime.js';
import { canonicalAddress } from '../../src/domain/addresses.js';
import { newId, sha256 } from '../../src/domain/ids.js';
import type { KeyMode } from '../../src/domain/types.js';
import { inboxSearchText } from '../../src/storage/test-inbox.js';
import type { Store } from '../../src/storage/store.js';
import type { RenderedEmail } from '../../src/templates/render.js';

/**
 * Test mode's read tests (issue 27 §4): messages inserted as the send path's transaction writes
 * them, of either mode, and captured into the inbox as the sandbox transport captures them (the
 * relay's composition, the blob first, then the row), so the read side is tested on its own.
 */

export interface Msg {
  to: string[];
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

function emailOf(m: Msg): RenderedEmail {
  const list = (xs: readonly string[] | undefined) => (xs ?? []).map((address) => ({ name: '', address }));
  return {
    subject: m.subject ?? 'Welcome aboard',
    from: { name: 'Acme', address: 'noreply@acme.test' },
    reply_to: [],
    to: list(m.to),
    cc: list(m.cc),
    bcc: list(m.bcc),
    html: '<p>Hello <b>there</b></p>',
    text: 'Hello there',
  };
}

/** A message of `acme`/`outbox` (or `m.org`) as the send path writes it (canonical recipient rows), its attachment stored. */
export async function insertMessage(store: Store, blobs: BlobStore | undefined, m: Msg): Promise<string> {
  const e = emailOf(m);
  const id = newId('msg');
  const org = m.org ?? 'acme';
  let attachments: string | null = null;
  if (m.attachment !== undefined) {
    if (blobs === undefined) throw new Error('an attachment needs a blob store');
    const key = `${org}/att_${id}`;
    await blobs.put(key, m.attachment.content, m.attachment.contentType);
    attachments = JSON.stringify([
      {
        blob_key: key,
        filename: m.attachment.filename,
        content_type: m.attachment.contentType,
        size: m.attachment.content.length,
      },
    ]);
  }
  await store.transaction((tx) =>
    tx.messages.insert({
      id,
      org_id: org,
      template_id: m.template ?? 'contact',
      service_id: 'outbox',
      status: m.status ?? 'queued',
      status_token_hash: sha256(`token-${id}`),
      key_type: 'private',
      content: JSON.stringify(e),
      subject: e.subject,
      header_message_id: `<${id}@mailroom.test>`,
      attachments,
      credit_taken: false,
      idempotency_key: null,
      recipients: [
        ...e.to.map((a) => ({ kind: 'to' as const, email: canonicalAddress(a.address) })),
        ...e.cc.map((a) => ({ kind: 'cc' as const, email: canonicalAddress(a.address) })),
        ...e.bcc.map((a) => ({ kind: 'bcc' as const, email: canonicalAddress(a.address) })),
      ],
      created_at: m.createdAt,
      mode: m.mode ?? 'live',
      simulated: m.simulated ?? false,
    }),
  );
  return id;
}

/** The status token insertMessage gives a message (its hash is stored). */
export const tokenOf = (id: string): string => `token-${id}`;

/**
 * Captures a stored message as the sandbox does: composed by the relay's composer, the bytes
 * put first, then the row. Returns the composed bytes, which the inbox must give back unchanged.
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
  const composer = rawComposer();
  const raw = await composer.compose({ messageId: id, headerMessageId: message.header_message_id, email, attachments });
  composer.close();
  const key = `${org}/eml_${id}`;
  await blobs.put(key, raw.bytes, 'message/rfc822');
  const recipients = [
    ...email.to.map((a) => ({ kind: 'to' as const, address: a.address })),
    ...email.cc.map((a) => ({ kind: 'cc' as const, address: a.address })),
    ...email.bcc.map((a) => ({ kind: 'bcc' as const, address: a.address })),
  ];
  await store.testInbox.insert({
    message_id: id,
    org_id: org,
    template_id: message.template_id,
    subject: email.subject,
    from_addr: email.from.address,
    recipients: JSON.stringify(recipients),
    search: inboxSearchText(email.subject, email.from.address, recipients),
    blob_key: key,
    size: raw.bytes.length,
    sha256: createHash('sha256').update(raw.bytes).digest('hex'),
    created_at: message.created_at,
    captured_at: now,
  });
  return raw.bytes;
}
