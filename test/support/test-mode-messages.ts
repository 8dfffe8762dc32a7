import type { KeyMode } from '../../src/domain/types.js';
import { newSortableId, sha256 } from '../../src/domain/ids.js';
import type { Store } from '../../src/storage/store.js';

/** Messages of `acme` (seedOrg) as the send path inserts them, of a given mode (issue 27). */
export async function insertOfMode(
  store: Store,
  m: {
    mode: KeyMode;
    createdAt: number;
    simulated?: boolean;
    to?: string[];
    cc?: string[];
    template?: string;
    subject?: string;
    status?: 'queued' | 'held';
  },
): Promise<string> {
  const id = newSortableId('msg', m.createdAt);
  const to = m.to ?? ['ann@example.com'];
  await store.transaction((tx) =>
    tx.messages.insert({
      id,
      org_id: 'acme',
      template_id: m.template ?? 'contact',
      service_id: 'outbox',
      status: m.status ?? 'queued',
      status_token_hash: sha256(id),
      key_type: 'private',
      content: JSON.stringify({ subject: m.subject ?? 'Hi', to, html: '<p>Hi</p>', text: 'Hi' }),
      subject: m.subject ?? 'Hi',
      header_message_id: `<${id}@mailroom.test>`,
      attachments: null,
      credit_taken: false,
      idempotency_key: null,
      recipients: [
        ...to.map((email) => ({ kind: 'to' as const, email })),
        ...(m.cc ?? []).map((email) => ({ kind: 'cc' as const, email })),
      ],
      created_at: m.createdAt,
      mode: m.mode,
      simulated: m.simulated ?? false,
    }),
  );
  return id;
}
