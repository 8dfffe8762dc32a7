import type { Kysely } from 'kysely';
import type { KeyMode, KeyType } from '../domain/types.js';
import { compiledOnce } from './compiled.js';
import type { Dialect } from './dialect.js';
import type { Database } from './schema.js';
import { fanOutNewMessage } from './webhook-outbox.js';

// The send path's insert of a new message (messagesRepo.insert): compiled statements, built once.

export interface NewMessage {
  id: string;
  org_id: string;
  template_id: string;
  service_id: string;
  status: 'queued' | 'held';
  status_token_hash: string;
  key_type: KeyType;
  /** The rendered email, JSON. */
  content: string;
  subject: string;
  header_message_id: string;
  attachments: string | null;
  credit_taken: boolean;
  idempotency_key: string | null;
  recipients: Array<{ kind: 'to' | 'cc' | 'bcc'; email: string }>;
  created_at: number;
  /** The sending key's mode; live when not given. */
  mode?: KeyMode;
  /** Some recipient is a simulator address; false when not given. */
  simulated?: boolean;
  /** A submitted message's bytes (SMTP submission): delivered as they are. */
  mime?: Buffer;
}

const insertMessageRow = compiledOnce<{
  id: string;
  org_id: string;
  template_id: string;
  service_id: string;
  status: string;
  status_token_hash: string;
  key_type: string;
  subject: string;
  header_message_id: string;
  credit_taken: number;
  next_attempt_at: number | null;
  idempotency_key: string | null;
  created_at: number;
  mode: string;
  simulated: number;
}>((db, p) =>
  db.insertInto('messages').values({
    id: p('id'),
    org_id: p('org_id'),
    template_id: p('template_id'),
    service_id: p('service_id'),
    status: p('status'),
    status_token_hash: p('status_token_hash'),
    key_type: p('key_type'),
    subject: p('subject'),
    header_message_id: p('header_message_id'),
    credit_taken: p('credit_taken'),
    attempts: 0,
    next_attempt_at: p('next_attempt_at'),
    lease_until: null,
    last_error: null,
    idempotency_key: p('idempotency_key'),
    created_at: p('created_at'),
    updated_at: p('created_at'),
    sent_at: null,
    mode: p('mode'),
    simulated: p('simulated'),
  }),
);

const insertContent = compiledOnce<{ message_id: string; content: string; attachments: string | null; mime: Buffer | null }>(
  (db, p) =>
    db
      .insertInto('message_contents')
      .values({ message_id: p('message_id'), content: p('content'), attachments: p('attachments'), mime: p('mime') }),
);

const insertRecipient = compiledOnce<{ message_id: string; org_id: string; kind: string; email: string; created_at: number }>(
  (db, p) =>
    db.insertInto('message_recipients').values({
      message_id: p('message_id'),
      org_id: p('org_id'),
      kind: p('kind'),
      email: p('email'),
      created_at: p('created_at'),
    }),
);

const insertFirstEvent = compiledOnce<{ message_id: string; type: string; at: number }>((db, p) =>
  db.insertInto('message_events').values({ message_id: p('message_id'), type: p('type'), at: p('at'), detail: null }),
);

/** The message, its recipients and its first event: call inside the acceptance transaction. */
export async function insertNewMessage(db: Kysely<Database>, dialect: Dialect, m: NewMessage): Promise<void> {
  await insertMessageRow(db, dialect, {
    id: m.id,
    org_id: m.org_id,
    template_id: m.template_id,
    service_id: m.service_id,
    status: m.status,
    status_token_hash: m.status_token_hash,
    key_type: m.key_type,
    subject: m.subject,
    header_message_id: m.header_message_id,
    credit_taken: m.credit_taken ? 1 : 0,
    next_attempt_at: m.status === 'queued' ? m.created_at : null,
    idempotency_key: m.idempotency_key,
    created_at: m.created_at,
    mode: m.mode ?? 'live',
    simulated: m.simulated === true ? 1 : 0,
  });
  await insertContent(db, dialect, { message_id: m.id, content: m.content, attachments: m.attachments, mime: m.mime ?? null });
  for (const r of m.recipients) {
    await insertRecipient(db, dialect, {
      message_id: m.id,
      org_id: m.org_id,
      kind: r.kind,
      email: r.email,
      created_at: m.created_at,
    });
  }
  await insertFirstEvent(db, dialect, { message_id: m.id, type: m.status, at: m.created_at });
  await fanOutNewMessage(db, dialect, m.id, m.created_at);
}
