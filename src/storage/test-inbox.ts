import { sql, type Kysely } from 'kysely';
import type { MessageStatus } from '../domain/types.js';
import { messageStatusColumn, oneOf } from './columns.js';
import { parseJson } from './json.js';
import type { Database, TestInboxTable } from './schema.js';

/**
 * The captured inbox of test messages (issue 27 §4): one row per test message as composed, its
 * bytes in the blob store under `blob_key`. Pages are keyset pages in (created_at, message_id)
 * order, newest first, one walk of test_inbox_org_time.
 */

export interface InboxRecipient {
  kind: 'to' | 'cc' | 'bcc';
  address: string;
}

/** A captured message as the sandbox transport hands it over; the repository derives what `q` searches. */
export interface NewInboxEntry extends Omit<TestInboxTable, 'recipients' | 'search'> {
  recipients: InboxRecipient[];
}

export interface InboxEntry extends Omit<TestInboxTable, 'recipients' | 'search'> {
  recipients: InboxRecipient[];
  /** The message's status now. */
  status: MessageStatus;
}

export interface InboxFilter {
  /** An exact recipient address, canonical (as message_recipients holds it). */
  to?: string;
  template_id?: string;
  /** Text searched in subject, from and addresses, case-insensitively; `%` and `_` match themselves. */
  q?: string;
  /** Inclusive lower bound of created_at, ms (the retention cutoff). */
  from?: number;
  /** Keyset position: entries strictly older than this. */
  before?: { created_at: number; message_id: string };
}

/** What `q` searches: subject, from and every address, lower-cased, one space apart. */
function inboxSearchText(subject: string | null, from: string, recipients: readonly InboxRecipient[]): string {
  return [subject ?? '', from, ...recipients.map((r) => r.address)].join(' ').toLowerCase();
}

/** `q` as a LIKE pattern: the wildcards and the escape character stand for themselves. */
export function likeContains(q: string): string {
  return `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const recipientKind = oneOf('test_inbox.recipients', ['to', 'cc', 'bcc'] as const);

function recipientsOf(text: string, id: string): InboxRecipient[] {
  const list = parseJson<Array<{ kind: string; address: string }>>(text, `test_inbox.recipients of ${id}`);
  return list.map((r) => ({ kind: recipientKind(r.kind), address: r.address }));
}

export function testInboxRepo(db: Kysely<Database>) {
  const select = () =>
    db
      .selectFrom('test_inbox as t')
      .innerJoin('messages as m', 'm.id', 't.message_id')
      .select([
        't.message_id',
        't.org_id',
        't.template_id',
        't.subject',
        't.from_addr',
        't.recipients',
        't.blob_key',
        't.size',
        't.sha256',
        't.created_at',
        't.captured_at',
        'm.status',
      ]);
  type Row = Awaited<ReturnType<ReturnType<typeof select>['executeTakeFirstOrThrow']>>;
  const toEntry = (r: Row): InboxEntry => ({
    message_id: r.message_id,
    org_id: r.org_id,
    template_id: r.template_id,
    subject: r.subject,
    from_addr: r.from_addr,
    recipients: recipientsOf(r.recipients, r.message_id),
    blob_key: r.blob_key,
    size: Number(r.size),
    sha256: r.sha256,
    created_at: Number(r.created_at),
    captured_at: Number(r.captured_at),
    status: messageStatusColumn(r.status),
  });

  return {
    /** Captures a message once: false when it was captured already (a retried hand-off). */
    async insert(e: NewInboxEntry): Promise<boolean> {
      const r = await db
        .insertInto('test_inbox')
        .values({
          ...e,
          recipients: JSON.stringify(e.recipients),
          search: inboxSearchText(e.subject, e.from_addr, e.recipients),
        })
        .onConflict((oc) => oc.column('message_id').doNothing())
        .executeTakeFirst();
      return (r.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },

    async has(messageId: string): Promise<boolean> {
      const row = await db.selectFrom('test_inbox').select('message_id').where('message_id', '=', messageId).executeTakeFirst();
      return row !== undefined;
    },

    async get(orgId: string, messageId: string): Promise<InboxEntry | undefined> {
      const row = await select().where('t.org_id', '=', orgId).where('t.message_id', '=', messageId).executeTakeFirst();
      return row === undefined ? undefined : toEntry(row);
    },

    /** Newest first, at most `limit`. */
    async list(orgId: string, f: InboxFilter, limit: number): Promise<InboxEntry[]> {
      let q = select().where('t.org_id', '=', orgId);
      if (f.template_id !== undefined) q = q.where('t.template_id', '=', f.template_id);
      if (f.from !== undefined) q = q.where('t.created_at', '>=', f.from);
      if (f.to !== undefined) {
        const to = f.to;
        q = q.where('t.message_id', 'in', (eb) =>
          eb.selectFrom('message_recipients').select('message_id').where('org_id', '=', orgId).where('email', '=', to),
        );
      }
      if (f.q !== undefined && f.q !== '') q = q.where(sql<boolean>`t.search like ${likeContains(f.q)} escape '\\'`);
      if (f.before !== undefined) {
        const b = f.before;
        q = q.where((eb) =>
          eb.or([
            eb('t.created_at', '<', b.created_at),
            eb.and([eb('t.created_at', '=', b.created_at), eb('t.message_id', '<', b.message_id)]),
          ]),
        );
      }
      const rows = await q.orderBy('t.created_at', 'desc').orderBy('t.message_id', 'desc').limit(limit).execute();
      return rows.map(toEntry);
    },

    /**
     * Deletes up to `limit` entries of an organization (oldest first) and returns their blob
     * keys, for the caller to delete once this commits. Emptying an inbox loops over it.
     */
    async deleteSome(orgId: string, limit: number): Promise<string[]> {
      const rows = await db
        .selectFrom('test_inbox')
        .select(['message_id', 'blob_key'])
        .where('org_id', '=', orgId)
        .orderBy('created_at')
        .orderBy('message_id')
        .limit(limit)
        .execute();
      if (rows.length === 0) return [];
      await db
        .deleteFrom('test_inbox')
        .where(
          'message_id',
          'in',
          rows.map((r) => r.message_id),
        )
        .execute();
      return rows.map((r) => r.blob_key);
    },
  };
}
