import { diskBlobStore } from '../../src/blobs/disk.js';
import type { BlobStore } from '../../src/blobs/blob-store.js';
import type { DeliveryReceipt, OutgoingEmail, TransportFactory } from '../../src/delivery/transport.js';
import { rawComposer, type RawMessage } from '../../src/delivery/transports/raw-mime.js';
import type { KeyMode } from '../../src/domain/types.js';
import { newId, sha256 } from '../../src/domain/ids.js';
import type { Store } from '../../src/storage/store.js';
import type { RenderedEmail } from '../../src/templates/render.js';
import { type Closer, tempDir } from '../support/cleanup.js';

/**
 * Test mode's delivery tests (issue 27): messages inserted as the send path's transaction does
 * for a test key or a live key's simulator addresses, a disk blob store of the test's own, a
 * composer that keeps what it composed, and a transport that records any call (there must be none).
 */

export interface SimMessage {
  to: string[];
  cc?: string[];
  bcc?: string[];
  mode: KeyMode;
  simulated: boolean;
  createdAt: number;
  org?: string;
}

export function simEmail(m: Pick<SimMessage, 'to' | 'cc' | 'bcc'>): RenderedEmail {
  const list = (xs: readonly string[] | undefined) => (xs ?? []).map((address) => ({ name: '', address }));
  return {
    subject: 'Welcome aboard',
    from: { name: 'Acme', address: 'noreply@acme.test' },
    reply_to: [],
    to: list(m.to),
    cc: list(m.cc),
    bcc: list(m.bcc),
    html: '<p>Hello</p>',
    text: 'Hello',
  };
}

/** One queued message of `acme`/`outbox` (no credit taken, as a test or simulator send takes none). */
export async function insertSim(store: Store, m: SimMessage): Promise<string> {
  const e = simEmail(m);
  const id = newId('msg');
  await store.transaction((tx) =>
    tx.messages.insert({
      id,
      org_id: m.org ?? 'acme',
      template_id: 'contact',
      service_id: 'outbox',
      status: 'queued',
      status_token_hash: sha256(id),
      key_type: 'private',
      content: JSON.stringify(e),
      subject: e.subject ?? '',
      header_message_id: `<${id}@mailroom.test>`,
      attachments: null,
      credit_taken: false,
      idempotency_key: null,
      recipients: [
        ...e.to.map((a) => ({ kind: 'to' as const, email: a.address })),
        ...e.cc.map((a) => ({ kind: 'cc' as const, email: a.address })),
        ...e.bcc.map((a) => ({ kind: 'bcc' as const, email: a.address })),
      ],
      created_at: m.createdAt,
      mode: m.mode,
      simulated: m.simulated,
    }),
  );
  return id;
}

export function testBlobs(closer: Closer): BlobStore {
  return diskBlobStore({ root: tempDir(closer, 'mailroom-blobs-'), baseUrl: 'http://mailroom.test', secret: 'blob-secret' });
}

/** rawComposer, keeping every composition (the bytes the inbox must hold, byte for byte). */
export function keepingComposer(): { compose: (mail: OutgoingEmail) => Promise<RawMessage>; composed: RawMessage[] } {
  const inner = rawComposer();
  const composed: RawMessage[] = [];
  return {
    composed,
    compose: async (mail) => {
      const raw = await inner.compose(mail);
      composed.push(raw);
      return raw;
    },
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
