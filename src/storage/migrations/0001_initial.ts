import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * The whole data model of the spec. One file serves both dialects through Kysely's schema
 * builder; the only dialect branch is the auto-increment key of the event log.
 * Times are BIGINT milliseconds (SQLite stores them as INTEGER).
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const s = db.schema;
  await s
    .createTable('organizations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('credits', 'bigint', (c) => c.notNull())
    .addColumn('overdraft', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('when_out_of_credits', 'text', (c) => c.notNull())
    .addColumn('hold_queue_limit', 'integer', (c) => c.notNull())
    .addColumn('email_verified', 'integer', (c) => c.notNull())
    .addColumn('suspended', 'integer', (c) => c.notNull())
    .addColumn('security', 'text', (c) => c.notNull())
    .addColumn('captcha_site_key', 'text')
    .addColumn('captcha_secret_key', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await s
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('public_key', 'text')
    .addColumn('hint', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await s.createIndex('api_keys_org').on('api_keys').columns(['org_id', 'created_at']).execute();

  await s
    .createTable('services')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('is_default', 'integer', (c) => c.notNull())
    .addColumn('max_per_second', 'real')
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('services_pk', ['org_id', 'id'])
    .execute();

  await s
    .createTable('templates')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('service_id', 'text')
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('to_addr', 'text', (c) => c.notNull())
    .addColumn('cc', 'text', (c) => c.notNull())
    .addColumn('bcc', 'text', (c) => c.notNull())
    .addColumn('from_name', 'text', (c) => c.notNull())
    .addColumn('from_email', 'text', (c) => c.notNull())
    .addColumn('reply_to', 'text', (c) => c.notNull())
    .addColumn('html', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('params', 'text', (c) => c.notNull())
    .addColumn('captcha', 'integer', (c) => c.notNull())
    .addColumn('allow_dynamic_recipients', 'integer', (c) => c.notNull())
    .addColumn('allow_attachments', 'integer', (c) => c.notNull())
    .addColumn('strict_params', 'integer', (c) => c.notNull())
    .addColumn('enforce_link_allowlist', 'integer', (c) => c.notNull())
    .addColumn('frozen', 'integer', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('templates_pk', ['org_id', 'id'])
    .execute();

  await s
    .createTable('suppressions')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('suppressions_pk', ['org_id', 'email'])
    .execute();

  await s
    .createTable('block_list')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('block_list_pk', ['org_id', 'value'])
    .execute();

  await s
    .createTable('messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('template_id', 'text', (c) => c.notNull())
    .addColumn('service_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('status_token_hash', 'text', (c) => c.notNull())
    .addColumn('key_type', 'text', (c) => c.notNull())
    .addColumn('subject', 'text')
    .addColumn('header_message_id', 'text', (c) => c.notNull())
    .addColumn('credit_taken', 'integer', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('lease_until', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('idempotency_key', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('sent_at', 'bigint')
    .execute();
  // History pages newest first, with every filter a prefix of one of these (id breaks ties).
  await s.createIndex('messages_org_time').on('messages').columns(['org_id', 'created_at', 'id']).execute();
  await s.createIndex('messages_org_status_time').on('messages').columns(['org_id', 'status', 'created_at', 'id']).execute();
  await s
    .createIndex('messages_org_template_time')
    .on('messages')
    .columns(['org_id', 'template_id', 'created_at', 'id'])
    .execute();
  await s.createIndex('messages_org_service_time').on('messages').columns(['org_id', 'service_id', 'created_at', 'id']).execute();
  // The worker's claim (status 'queued', due first) and the reaper (status 'sending', whose
  // few rows it filters by lease) share one index.
  await s.createIndex('messages_due').on('messages').columns(['status', 'next_attempt_at']).execute();

  // The rendered email lives beside the message row, not in it: every status change rewrites
  // its row, and a row carrying a few kB of HTML made each claim and outcome several times
  // dearer (the queue's claim was the worker's largest cost).
  await s
    .createTable('message_contents')
    .addColumn('message_id', 'text', (c) => c.primaryKey().references('messages.id').onDelete('cascade'))
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('attachments', 'text')
    .execute();

  await s
    .createTable('message_recipients')
    .addColumn('message_id', 'text', (c) => c.notNull().references('messages.id').onDelete('cascade'))
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  // `q` (exact recipient) on history, and the per-recipient daily limit.
  await s
    .createIndex('recipients_org_email_time')
    .on('message_recipients')
    .columns(['org_id', 'email', 'created_at', 'message_id'])
    .execute();
  await s.createIndex('recipients_message').on('message_recipients').column('message_id').execute();

  // SQLite: a plain INTEGER PRIMARY KEY is the rowid, always larger than any id in use (so it
  // orders a timeline); AUTOINCREMENT would add a sqlite_sequence write to every event for a
  // guarantee (ids never reused after deletes) that nothing here needs.
  await s
    .createTable('message_events')
    .addColumn('id', dialect === 'postgres' ? 'bigserial' : 'integer', (c) => c.primaryKey())
    .addColumn('message_id', 'text', (c) => c.notNull().references('messages.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('detail', 'text')
    .execute();
  await s.createIndex('events_message').on('message_events').columns(['message_id', 'id']).execute();

  await s
    .createTable('idempotency_records')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_headers', 'text')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_pk', ['org_id', 'key'])
    .execute();
  await s.createIndex('idempotency_expiry').on('idempotency_records').column('expires_at').execute();

  await s
    .createTable('uploads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text')
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addColumn('key_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('url_expires_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('uploaded_at', 'bigint')
    .execute();
  await s.createIndex('uploads_org_time').on('uploads').columns(['org_id', 'created_at']).execute();
  await s.createIndex('uploads_expiry').on('uploads').column('expires_at').execute();
}
