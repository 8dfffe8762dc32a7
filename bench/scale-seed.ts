import Database from 'better-sqlite3';

/**
 * Seeds N stored messages straight into the tables a send writes (message row, its content, its
 * recipient, its events, and the idempotency record of the last day's keyed sends), spread
 * evenly over 30 days and 300 organizations, with the statuses a month of traffic leaves:
 * delivered 70%, sent 22%, bounced 4%, discarded 2%, failed 1.5%, complained 0.5%.
 *
 * Each row is a pure function of its index i (INSERT … SELECT from a recursive CTE, 100,000
 * messages a statement), so a range that the purge removed can be put back exactly. A fresh
 * seed drops the secondary indexes of those tables first and builds them again at the end:
 * sorting 10 M keys once is far cheaper than 10 M inserts spread over 300 organizations' parts
 * of eight B-trees.
 */

export const SCALE_ORGS = 300;
export const SCALE_TEMPLATES = ['welcome', 'receipt', 'reset', 'digest'] as const;
export const DAY_MS = 86_400_000;
export const SPAN_MS = 30 * DAY_MS;
/** Bumped whenever the seed's rows change: a seed of another version is made again. */
export const SEED_VERSION = 2;

export interface SeedPlan {
  /** Messages in the whole span. */
  messages: number;
  /** created_at of message i is start + floor(i * SPAN_MS / messages). */
  start: number;
}

export function orgId(n: number): string {
  return `org${String(n).padStart(3, '0')}`;
}

/** The id message i gets: sortable like a real one (12 hex digits of its time lead). */
export function messageIdOf(plan: SeedPlan, i: number): { id: string; org: string; createdAt: number } {
  // In integers, as the seed's SQL does (seedRange): past ~3.5 M messages i × SPAN_MS passes 2^53.
  const createdAt = plan.start + Number((BigInt(i) * BigInt(SPAN_MS)) / BigInt(plan.messages));
  const org = Number(((BigInt(i) * 2654435761n) % 4294967291n) % BigInt(SCALE_ORGS));
  const hex = (n: number, digits: number) => n.toString(16).padStart(digits, '0');
  const id = `msg_${hex(createdAt, 12)}${hex(org, 6)}${hex(i, 16)}`;
  return { id, org: orgId(org), createdAt };
}

/** Index of the first message created at or after `at`. */
export function firstIndexAt(plan: SeedPlan, at: number): number {
  const scaled = BigInt(Math.max(0, Math.round(at - plan.start))) * BigInt(plan.messages);
  const span = BigInt(SPAN_MS);
  return Number(scaled / span + (scaled % span === 0n ? 0n : 1n));
}

/** The rows of messages [lo, hi) with every derived column; h1 picks org and template, h2 status and recipient. */
const BASE = `
with recursive seq(i) as (select :lo union all select i + 1 from seq where i + 1 < :hi),
raw as (
  select i, :start + (i * ${SPAN_MS}) / :n as c,
         (i * 2654435761) % 4294967291 as h1, ((i * 1103515245 + 12345) % 2147483648) as h2
  from seq
),
base as (
  select i, c, h1 % ${SCALE_ORGS} as org, (h1 / ${SCALE_ORGS}) % ${SCALE_TEMPLATES.length} as tpl, h2 % 1000 as r, (h2 / 1000)
  % 5000 as rcpt
  from raw
),
m as (
  select i, c, r, rcpt,
    'msg_' || printf('%012x', c) || printf('%06x', org) || printf('%016x', i) as id,
    'org' || printf('%03d', org) as org_id,
    case tpl ${SCALE_TEMPLATES.map((t, k) => `when ${k} then '${t}'`).join(' ')} end as template_id,
    case when r < 700 then 'delivered' when r < 920 then 'sent' when r < 960 then 'bounced'
         when r < 980 then 'discarded' when r < 995 then 'failed' else 'complained' end as status
  from base
)`;

const STATEMENTS = {
  messages: `${BASE}
insert into messages (id, org_id, template_id, service_id, status, status_token_hash, key_type, subject, header_message_id,
  credit_taken, attempts, next_attempt_at, lease_until, last_error, idempotency_key, created_at, updated_at, sent_at,
  provider_message_id)
select id, org_id, template_id, 'outbox', status, lower(hex(randomblob(32))), 'private',
  'Your ' || template_id || ' from Analytical Engines', '<' || id || '@mailroom.test>',
  case when status = 'discarded' then 0 else 1 end, case when status in ('discarded') then 0 else 1 end, null, null,
  case when status = 'bounced' then '550 5.1.1 <user' || rcpt || '@example.com>: Recipient address rejected'
       when status = 'failed' then '554 5.7.1 Service unavailable; client host blocked' else null end,
  case when c >= :keysFrom and r % 2 = 0 then 'k-' || i else null end,
  c, c + 4000, case when status in ('discarded', 'failed') then null else c + 800 end, null
from m`,
  contents: `${BASE}
insert into message_contents (message_id, content, attachments)
select id, json_object(
  'from', 'Analytical Engines <noreply@' || org_id || '.example.com>', 'to', json_array('user' || rcpt || '@example.com'),
  'subject', 'Your ' || template_id || ' from Analytical Engines',
  'html', '<!doctype html><html><body><p>Dear Ada Lovelace,</p><p>The engine is ready. The engine is ready. The ' ||
    'engine is ready. The engine is ready. The engine is ready. The engine is ready. The engine is ready. ' ||
    'The engine is ready.</p><p>Plan: pro</p><p><a href="https://example.com/account">Your ' ||
    'account</a></p></body></html>',
  'text', 'The engine is ready. The engine is ready. The engine is ready. The engine is ready. The engine is ' ||
    'ready. The engine is ready. The engine is ready. The engine is ready.'), null
from m`,
  recipients: `${BASE}
insert into message_recipients (message_id, org_id, kind, email, created_at, state, reason, updated_at)
select id, org_id, 'to', 'user' || rcpt || '@example.com', c,
  case status when 'discarded' then 'suppressed' else status end, null, c + 4000
from m`,
  // The timeline each final status leaves: the first event, the hand-off, what the provider said.
  events: `${BASE},
tl(status, k, type, dt) as (values
  ('delivered', 0, 'queued', 0), ('delivered', 1, 'sent', 800), ('delivered', 2, 'delivered', 4000),
  ('sent', 0, 'queued', 0), ('sent', 1, 'sent', 800),
  ('bounced', 0, 'queued', 0), ('bounced', 1, 'sent', 800), ('bounced', 2, 'bounced', 4000),
  ('complained', 0, 'queued', 0), ('complained', 1, 'sent', 800), ('complained', 2, 'delivered', 4000), ('complained', 3,
  'complained', 60000),
  ('failed', 0, 'queued', 0), ('failed', 1, 'failed', 800),
  ('discarded', 0, 'queued', 0), ('discarded', 1, 'discarded', 5))
insert into message_events (message_id, type, at, detail)
select m.id, tl.type, m.c + tl.dt,
  case tl.type when 'sent' then json_object('service_id', 'outbox', 'recipients', json_array('user' || m.rcpt || '@example.com'))
    when 'bounced' then json_object('recipient', 'user' || m.rcpt || '@example.com', 'reason',
    '550 5.1.1 Recipient address rejected')
    else null end
from m join tl on tl.status = m.status order by m.i, tl.k`,
  idempotency: `${BASE}
insert into idempotency_records (org_id, key, request_hash, state, response_status, response_headers, response_body,
created_at, expires_at)
select org_id, 'k-' || i, lower(hex(randomblob(32))), 'done', 202, '{"content-type":"application/json"}',
  json_object('message_id', id, 'status', 'queued', 'status_token', 'st_' || lower(hex(randomblob(16)))), c, c + ${DAY_MS}
from m where c >= :keysFrom and r % 2 = 0`,
} as const;

const SEEDED_TABLES = ['messages', 'message_contents', 'message_recipients', 'message_events', 'idempotency_records'];
const CHUNK = 100_000;

/**
 * Writes messages [lo, hi) of the plan. `keysFrom`: sends from then on carried an
 * Idempotency-Key still remembered (24 h before the seed's end).
 */
export function seedRange(db: Database.Database, plan: SeedPlan, lo: number, hi: number, onChunk?: (done: number) => void): void {
  const keysFrom = plan.start + SPAN_MS - DAY_MS;
  const statements = Object.values(STATEMENTS).map((s) => db.prepare(s));
  for (let a = lo; a < hi; a += CHUNK) {
    // BigInts bind as SQLite integers; numbers bind as REAL, and past ~3.5 M messages the
    // products above lost their low bits (organizations and times that messageIdOf, computing
    // exactly, never found: 4 in 10 message reads of a 10 M seed were 404s).
    const params = {
      lo: BigInt(a),
      hi: BigInt(Math.min(hi, a + CHUNK)),
      start: BigInt(plan.start),
      n: BigInt(plan.messages),
      keysFrom: BigInt(keysFrom),
    };
    db.transaction(() => {
      for (const s of statements) s.run(params);
    })();
    onChunk?.(Math.min(hi, a + CHUNK) - lo);
  }
}

/** Seeds a whole plan into a migrated database with its organizations, as fast as it can. */
export function seedAll(file: string, plan: SeedPlan, log: (line: string) => void): void {
  const db = new Database(file);
  try {
    // A bench seed, not data to keep: no journal, no flush; the file is reseeded if it breaks.
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('foreign_keys = OFF');
    db.pragma('cache_size = -1000000');
    db.pragma('temp_store = MEMORY');
    db.pragma('threads = 2');
    const placeholders = SEEDED_TABLES.map(() => '?').join(', ');
    const indexes = db
      .prepare(`select name, sql from sqlite_master where type = 'index' and sql is not null and tbl_name in (${placeholders})`)
      .all(...SEEDED_TABLES) as Array<{ name: string; sql: string }>;
    for (const ix of indexes) db.exec(`drop index ${ix.name}`);
    const t0 = performance.now();
    let last = t0;
    seedRange(db, plan, 0, plan.messages, (done) => {
      const now = performance.now();
      if (now - last > 15_000 || done === plan.messages) {
        log(`  seeded ${done.toLocaleString('en')} messages in ${((now - t0) / 1000).toFixed(0)} s`);
        last = now;
      }
    });
    for (const ix of indexes) {
      const t = performance.now();
      db.exec(ix.sql);
      log(`  index ${ix.name} built in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
    db.pragma('journal_mode = WAL');
  } finally {
    db.close();
  }
}

/** Puts back messages [lo, hi) after a purge took them (indexes in place: a day is small). */
export function refillRange(file: string, plan: SeedPlan, lo: number, hi: number): void {
  const db = new Database(file);
  try {
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -1000000');
    // The delete below takes contents, recipients and events with it (foreign keys cascade).
    db.pragma('foreign_keys = ON');
    const lowId = messageIdOf(plan, lo).id;
    const highId = hi < plan.messages ? messageIdOf(plan, hi).id : 'msg_~';
    // A purge stopped halfway leaves part of the range: take it out, then write it whole. (The
    // refilled day is the oldest, long before the last day's idempotency records.)
    db.prepare('delete from messages where id >= ? and id < ?').run(lowId, highId);
    seedRange(db, plan, lo, hi);
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/** Messages stored in [lo, hi) of the plan, counted on the primary key (ids lead with their time). */
export function countRange(file: string, plan: SeedPlan, lo: number, hi: number): number {
  const db = new Database(file, { readonly: true });
  try {
    const lowId = messageIdOf(plan, lo).id;
    const highId = hi < plan.messages ? messageIdOf(plan, hi).id : 'msg_~';
    const row = db.prepare('select count(*) as n from messages where id >= ? and id < ?').get(lowId, highId) as { n: number };
    return row.n;
  } finally {
    db.close();
  }
}
