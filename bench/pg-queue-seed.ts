import pg from 'pg';
import { applyConfig } from '../src/admin/apply.js';
import type { Store } from '../src/storage/store.js';

/**
 * The PostgreSQL queue bench's pre-load: an organization `bench` with a default service, and
 * `count` queued messages due since `createdAt`, each with the rows the send path writes for it
 * (src/storage/messages.ts insert): the message, its content (a ~1 kB rendered email), one `to`
 * recipient and its first event (`queued`). No webhook endpoint, so the fan-out adds nothing.
 * Written as four INSERT … SELECT over generate_series, outside the timed part: through the
 * send path 20,000 messages take ~6 statements each, tens of seconds a run.
 */
export async function seedQueued(store: Store, url: string, schema: string, count: number, createdAt: number): Promise<void> {
  await applyConfig(store, {
    organizations: [
      {
        id: 'bench',
        plan: 'business_200k',
        credits: 1_000_000,
        services: [{ id: 'sink', provider: 'smtp', default: true, smtp: { host: '127.0.0.1', port: 25 } }],
      },
    ],
  });
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    await client.query('begin');
    const ids = `select 'msg_' || lpad(i::text, 10, '0') as id, i from generate_series(1, $1::int) as i`;
    await client.query(
      `
      insert into messages (id, org_id, template_id, service_id, status, status_token_hash, key_type, subject,
        header_message_id, credit_taken, attempts, next_attempt_at, created_at, updated_at)
      select id, 'bench', 'bench', 'sink', 'queued', md5(id), 'private', 'Bench message ' || i,
        '<' || id || '@bench>', 1, 0, $2::bigint, $2::bigint, $2::bigint
      from (${ids}) s`,
      [count, createdAt],
    );
    await client.query(
      `
      insert into message_contents (message_id, content, attachments)
      select id, json_build_object(
        'subject', 'Bench message ' || i, 'from', json_build_object('name', 'Bench', 'address', 'bench@mailroom.test'),
        'reply_to', '[]'::json, 'to', json_build_array(json_build_object('name', '', 'address', 'rcpt' || (i % 50) ||
        '@example.com')),
        'cc', '[]'::json, 'bcc', '[]'::json,
        'html', repeat('<p>Hello ' || i || '</p>', 20), 'text', repeat('Hello ' || i || E'\\n', 20))::text, null
      from (${ids}) s`,
      [count],
    );
    await client.query(
      `
      insert into message_recipients (message_id, org_id, kind, email, created_at)
      select id, 'bench', 'to', 'rcpt' || (i % 50) || '@example.com', $2::bigint from (${ids}) s`,
      [count, createdAt],
    );
    await client.query(
      `
      insert into message_events (message_id, type, at, detail)
      select id, 'queued', $2::bigint, null from (${ids}) s`,
      [count, createdAt],
    );
    await client.query('commit');
  } finally {
    await client.end();
  }
  await analyzeSchema(url, schema);
}

/** Fresh statistics for every table of a schema, as autovacuum would have after a load: both systems get them. */
export async function analyzeSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ t: string }>('select tablename as t from pg_tables where schemaname = $1', [schema]);
    for (const { t } of tables.rows) await client.query(`analyze "${schema}"."${t}"`);
  } finally {
    await client.end();
  }
}

/** Messages of the bench schema not yet `sent`: a run that leaves any did not do its work. */
export async function unsentCount(url: string, schema: string): Promise<number> {
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    const r = await client.query<{ n: number }>(`select count(*)::int as n from messages where status <> 'sent'`);
    return Number(r.rows[0]?.n ?? -1);
  } finally {
    await client.end();
  }
}
