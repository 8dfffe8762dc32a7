import { newSortableId } from '../../src/domain/ids.js';
import type { KeyMode } from '../../src/domain/types.js';
import type { Store } from '../../src/storage/store.js';

/**
 * Messages written straight into the store (no send pipeline): what the message search and
 * export tests list, thousands at a time. `at` is the created_at; ids are sortable by it as a
 * send makes them.
 */
export interface StoredMessageInput {
  at: number;
  subject?: string;
  to?: string[];
  cc?: string[];
  template_id?: string;
  service_id?: string;
  mode?: KeyMode;
  status?: 'queued' | 'held';
  id?: string;
}

export async function insertMessages(store: Store, orgId: string, inputs: readonly StoredMessageInput[]): Promise<string[]> {
  const ids: string[] = [];
  // One transaction per 500: a few seconds for thousands on PostgreSQL instead of a commit each.
  for (let i = 0; i < inputs.length; i += 500) {
    await store.transaction(async (tx) => {
      for (const m of inputs.slice(i, i + 500)) {
        const id = m.id ?? newSortableId('msg', m.at);
        ids.push(id);
        const subject = m.subject ?? 'Hello';
        const recipients = [
          ...(m.to ?? ['owner@acme.test']).map((email) => ({ kind: 'to' as const, email })),
          ...(m.cc ?? []).map((email) => ({ kind: 'cc' as const, email })),
        ];
        await tx.messages.insert({
          id,
          org_id: orgId,
          template_id: m.template_id ?? 'contact',
          service_id: m.service_id ?? 'default',
          status: m.status ?? 'queued',
          status_token_hash: `h-${id}`,
          key_type: 'private',
          content: JSON.stringify({ subject }),
          subject,
          header_message_id: `<${id}@acme.test>`,
          attachments: null,
          credit_taken: true,
          idempotency_key: null,
          recipients,
          created_at: m.at,
          mode: m.mode ?? 'live',
        });
      }
    });
  }
  return ids;
}
