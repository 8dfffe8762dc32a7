import { sql, type Kysely } from 'kysely';
import type { KeyMode, MessageStatus } from '../domain/types.js';
import { keyModeColumn, messageStatusColumn } from './columns.js';
import type { Dialect } from './dialect.js';
import type { Database } from './schema.js';

/**
 * `GET /v1/history` (and the admin API's message list) reads here: one page is one index walk
 * in (created_at, id) order, and a filter with several statuses is one walk per status, merged
 * (messagesRepo.history). Migration 0011 tells SQLite's planner which walk serves each filter.
 *
 * Live and test messages never mix (issue 27). No index but messages_test (migration 0015) holds
 * the mode: a live page walks the index it walked before and skips test rows as it reads them
 * (it reads each row anyway), so live plans are unchanged; a test page names `mode = 'test'` as
 * a literal, which SQLite needs to match that partial index.
 */

/**
 * A status a list filters by: a stored one, or `retrying`: queued or sending after an attempt
 * that failed (deferred, or queued again after its service's error), which the stored status
 * alone calls `queued`.
 */
export type HistoryStatus = MessageStatus | 'retrying';

/**
 * The predicate of messages_org_retrying (migration 0018), as literals, in two terms: SQLite
 * matches a partial index only against the statement's own text, term by term.
 */
export const RETRYING = [sql<boolean>`status in ('queued', 'sending')`, sql<boolean>`last_error is not null`] as const;

export interface HistoryFilter {
  /** Live messages when not given. */
  mode?: KeyMode;
  statuses?: readonly HistoryStatus[];
  template_id?: string;
  service_id?: string;
  /** Inclusive lower bound, ms. */
  from?: number;
  /** Exclusive upper bound, ms. */
  to?: number;
  /** Exact recipient address (lower-cased). */
  recipient?: string;
  /** Part of a recipient address, already as stored (lower-cased, NFC): the operator UI's search. */
  recipientContains?: string;
  /** Part of the subject, any case (Unicode case folding on both databases: see containsFolded). */
  subjectContains?: string;
  /** One message id, exactly as stored (ids are case-sensitive). */
  messageId?: string;
  /** Keyset position: items strictly older than this (created_at, id). */
  before?: { created_at: number; id: string };
}

export interface HistoryRow {
  id: string;
  status: MessageStatus;
  template_id: string;
  service_id: string;
  subject: string | null;
  created_at: number;
  sent_at: number | null;
  mode: KeyMode;
  /** Some recipient is a simulator address. */
  simulated: boolean;
  /** Queued or sending after a failed attempt (see HistoryStatus). */
  retrying?: boolean;
}

/**
 * The first `limit` rows of pages each already newest first, newest first. A message seen in two
 * pages (its status moved between the two reads, or a status named twice) is listed once.
 */
export function newestFirst(pages: ReadonlyArray<readonly HistoryRow[]>, limit: number): HistoryRow[] {
  const seen = new Set<string>();
  const out: HistoryRow[] = [];
  for (const r of pages.flat().sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))) {
    if (out.length === limit) break;
    if (seen.has(r.id)) continue;
    seen.add(r.id);
    out.push(r);
  }
  return out;
}

/**
 * `column` contains `part`, case-insensitively. instr/strpos take the text as it is, so a `%`
 * or `_` typed by the operator is no wildcard and needs no escaping (LIKE would need ESCAPE).
 * SQLite's lower() and LIKE fold ASCII only, so SQLite folds with mailroom_fold (JavaScript's
 * toLowerCase, registered in dialect.ts); PostgreSQL's lower() folds by the database's LC_CTYPE
 * (C.UTF-8 or a *.UTF-8 locale fold every letter; a plain `C` database folds ASCII only).
 * No B-tree serves a contains test: the walk reads the (org, time) index and tests each row
 * in the time range until a page is full, so a search that matches nothing reads every message
 * in the range. Measured (bench:export, page of 25, 2 shared cores under load): at 100,000
 * messages a subject search with no match took 1.3 s on SQLite and 0.26 s on PostgreSQL, a
 * recipient search 3.2 s and 0.68 s; at 1,000,000 on SQLite the subject search 2.0 s. A date
 * range bounds it; the exact address (`q`) and the message id use indexes.
 */
function containsFolded(dialect: Dialect, column: string, part: string) {
  return dialect === 'sqlite'
    ? sql<boolean>`instr(mailroom_fold(${sql.ref(column)}), mailroom_fold(${part})) > 0`
    : sql<boolean>`strpos(lower(${sql.ref(column)}), lower(${part})) > 0`;
}

/** One page of history with at most one status: a single index walk in time order. */
export async function historyPage(
  db: Kysely<Database>,
  dialect: Dialect,
  orgId: string,
  f: HistoryFilter,
  limit: number,
): Promise<HistoryRow[]> {
  let q = db
    .selectFrom('messages')
    .select(['id', 'status', 'template_id', 'service_id', 'subject', 'created_at', 'sent_at', 'mode', 'simulated'])
    .select(sql<number>`case when last_error is null then 0 else 1 end`.as('failed_before'))
    .where('org_id', '=', orgId)
    .where(f.mode === 'test' ? sql<boolean>`mode = 'test'` : sql<boolean>`mode = 'live'`);
  const statuses = f.statuses ?? [];
  if (statuses.includes('retrying')) {
    // messagesRepo.history asks for `retrying` alone: one walk of its partial index.
    q = q.where(RETRYING[0]).where(RETRYING[1]);
  } else if (statuses.length > 0) q = q.where('status', 'in', statuses as MessageStatus[]);
  if (f.template_id !== undefined) q = q.where('template_id', '=', f.template_id);
  if (f.service_id !== undefined) q = q.where('service_id', '=', f.service_id);
  if (f.from !== undefined) q = q.where('created_at', '>=', f.from);
  if (f.to !== undefined) q = q.where('created_at', '<', f.to);
  if (f.recipient !== undefined) {
    const recipient = f.recipient;
    q = q.where('id', 'in', (eb) =>
      eb.selectFrom('message_recipients').select('message_id').where('org_id', '=', orgId).where('email', '=', recipient),
    );
  }
  if (f.messageId !== undefined) q = q.where('id', '=', f.messageId);
  if (f.subjectContains !== undefined) q = q.where(containsFolded(dialect, 'subject', f.subjectContains));
  if (f.recipientContains !== undefined) {
    // Addresses are stored lower-cased and NFC (canonicalAddress), as the part is: no folding.
    // Per listed row, one probe of recipients_message: bounded by the time range like the walk.
    const part = f.recipientContains;
    const found = dialect === 'sqlite' ? sql<boolean>`instr(r.email, ${part}) > 0` : sql<boolean>`strpos(r.email, ${part}) > 0`;
    q = q.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('message_recipients as r').select(sql`1`.as('one')).whereRef('r.message_id', '=', 'messages.id').where(found),
      ),
    );
  }
  if (f.before !== undefined) {
    const b = f.before;
    // `created_at <= t` first, as its own term: the index's range starts at the cursor. With the
    // OR alone, SQLite ran two index searches and sorted every older row in a temp B-tree, so
    // each page cost the rows behind it: 200 ms for a page of 1000 at 20,000 messages, O(n²)
    // for an export (bench:export); now a page reads its own rows only.
    q = q
      .where('created_at', '<=', b.created_at)
      .where((eb) => eb.or([eb('created_at', '<', b.created_at), eb('id', '<', b.id)]));
  }
  const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map(({ failed_before, ...r }) => {
    const status = messageStatusColumn(r.status);
    return {
      ...r,
      status,
      mode: keyModeColumn(r.mode),
      simulated: Number(r.simulated) === 1,
      retrying: Number(failed_before) === 1 && (status === 'queued' || status === 'sending'),
    };
  });
}
