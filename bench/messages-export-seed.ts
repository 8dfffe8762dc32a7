import Database from 'better-sqlite3';
import pg from 'pg';
import { applyConfig } from '../src/admin/apply.js';
import { systemClock } from '../src/domain/clock.js';
import { openStore } from '../src/storage/store.js';

/**
 * `count` live messages of organization `acme` over the last 20 days (inside the default 30-day
 * retention), one `to` recipient each, written straight into the tables: the export reads
 * messages and message_recipients only. Subjects include the cells the CSV must quote or guard
 * (a comma and quotes every 50th, `=SUM(1)` every 97th, non-ASCII every 101st). The same rows on
 * both databases: SQLite through prepared statements in one transaction, PostgreSQL as two
 * INSERT … SELECT over generate_series.
 */

export const EXPORT_ORG = 'acme';
const DAY = 86_400_000;
const SPAN = 20 * DAY;
const STATUSES = ['delivered', 'delivered', 'delivered', 'sent', 'bounced', 'failed', 'queued'] as const;
const TEMPLATES = ['contact', 'welcome', 'receipt'] as const;

function subjectOf(i: number): string {
  if (i % 97 === 0) return '=SUM(1)';
  if (i % 50 === 0) return `"Quoted", subject ${i}`;
  if (i % 101 === 0) return `Ärger Nr. ${i}`;
  return `Order ${i} for Customer ${i % 5000}`;
}

/** The organization and its services, as an operator's configuration would create them. */
async function seedOrganization(url: string): Promise<void> {
  const store = await openStore(url, { clock: systemClock });
  try {
    await applyConfig(store, {
      organizations: [
        {
          id: EXPORT_ORG,
          name: 'Acme',
          plan: 'pro',
          credits: 1000,
          services: [
            { id: 'relay', provider: 'smtp', default: true, smtp: { host: 'smtp.acme.internal', port: 587 } },
            { id: 'postmark', provider: 'postmark', postmark: { server_token: 'bench-token-never-used' } },
          ],
        },
      ],
    });
  } finally {
    await store.close();
  }
}

/** Seconds taken. */
export async function seedExportSqlite(file: string, count: number, now = Date.now()): Promise<number> {
  const started = performance.now();
  await seedOrganization(`sqlite:${file}`);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  const message = db.prepare(`insert into messages (id, org_id, template_id, service_id, status, status_token_hash,
    key_type, subject, header_message_id, credit_taken, attempts, created_at, updated_at, sent_at)
    values (?, ?, ?, ?, ?, ?, 'private', ?, ?, 1, 1, ?, ?, ?)`);
  const recipient = db.prepare(
    "insert into message_recipients (message_id, org_id, kind, email, created_at) values (?, ?, 'to', ?, ?)",
  );
  const start = now - SPAN;
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const created = start + Math.floor((i * SPAN) / count);
      const id = `msg_${created.toString(16).padStart(12, '0')}${String(i).padStart(8, '0')}`;
      const status = STATUSES[i % STATUSES.length] ?? 'delivered';
      const sent = status === 'queued' || status === 'failed' ? null : created + 1000;
      message.run(
        id,
        EXPORT_ORG,
        TEMPLATES[i % 3] ?? 'contact',
        i % 5 === 0 ? 'postmark' : 'relay',
        status,
        `h${i}`,
        subjectOf(i),
        `<${i}@acme.test>`,
        created,
        created + 5000,
        sent,
      );
      recipient.run(id, EXPORT_ORG, `user${i % 5000}@example.org`, created);
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return (performance.now() - started) / 1000;
}

/** Seconds taken; `url` names the schema (`?schema=…`), which the store creates. */
export async function seedExportPostgres(url: string, schema: string, count: number, now = Date.now()): Promise<number> {
  const started = performance.now();
  await seedOrganization(url);
  const client = new pg.Client({ connectionString: url.replace(/[?&]schema=[^&]*/, '') });
  await client.connect();
  try {
    await client.query(`set search_path to ${schema}`);
    const series =
      '(select g, ($1::bigint + (g::bigint * $2::bigint) / $3::bigint) as c from generate_series(0, $3::int - 1) g) s';
    const args = [now - SPAN, SPAN, count];
    const statuses = `(array[${STATUSES.map((s) => `'${s}'`).join(',')}])[1 + g % ${STATUSES.length}]`;
    await client.query(
      `insert into messages (id, org_id, template_id, service_id, status, status_token_hash, key_type, subject,
        header_message_id, credit_taken, attempts, created_at, updated_at, sent_at)
       select 'msg_' || lpad(to_hex(c), 12, '0') || lpad(g::text, 8, '0'), '${EXPORT_ORG}',
        (array['contact', 'welcome', 'receipt'])[1 + g % 3], case when g % 5 = 0 then 'postmark' else 'relay' end,
        ${statuses}, 'h' || g, 'private',
        case when g % 97 = 0 then '=SUM(1)' when g % 50 = 0 then '"Quoted", subject ' || g
          when g % 101 = 0 then 'Ärger Nr. ' || g else 'Order ' || g || ' for Customer ' || (g % 5000) end,
        '<' || g || '@acme.test>', 1, 1, c, c + 5000,
        case when ${statuses} in ('queued', 'failed') then null else c + 1000 end
       from ${series}`,
      args,
    );
    await client.query(
      `insert into message_recipients (message_id, org_id, kind, email, created_at)
       select 'msg_' || lpad(to_hex(c), 12, '0') || lpad(g::text, 8, '0'), '${EXPORT_ORG}', 'to',
        'user' || (g % 5000) || '@example.org', c
       from ${series}`,
      args,
    );
    // Autovacuum analyzes tables this size within about a minute of the load: the plans production gets.
    await client.query('analyze messages; analyze message_recipients');
  } finally {
    await client.end();
  }
  return (performance.now() - started) / 1000;
}
