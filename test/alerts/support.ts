import type { Store } from '../../src/storage/store.js';
import { databaseOf } from '../support/db.js';

/** `n` messages of `acme` with this status, created at `at`, inserted in one statement (the rates count rows only). */
export async function insertStatus(store: Store, status: string, n: number, at: number, mode = 'live'): Promise<void> {
  if (n === 0) return;
  const rows = Array.from({ length: n }, () => {
    const id = `msg_${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
    return {
      id,
      org_id: 'acme',
      template_id: 'contact',
      service_id: 'outbox',
      status,
      status_token_hash: id,
      key_type: 'private',
      subject: 'Hi',
      header_message_id: `<${id}@mailroom.test>`,
      credit_taken: 0,
      attempts: 1,
      next_attempt_at: null,
      lease_until: null,
      last_error: null,
      idempotency_key: null,
      created_at: at,
      updated_at: at,
      sent_at: at,
      mode,
    };
  });
  await databaseOf(store).insertInto('messages').values(rows).execute();
}

/** Every alert event of `acme`, oldest first, as `kind:state`. */
export async function alertLog(store: Store): Promise<string[]> {
  return (await store.alerts.events('acme', 100)).reverse().map((e) => `${e.kind}:${e.state}`);
}
