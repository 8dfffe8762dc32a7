import { sql, type Insertable, type Kysely, type Selectable, type Updateable } from 'kysely';
import { newId } from '../../src/domain/ids.js';
import type { MessageStatus } from '../../src/domain/types.js';
import type { Store } from '../../src/storage/store.js';
import type { Database, MessageContentsTable, MessagesTable } from '../../src/storage/schema.js';

/**
 * Tests that look under the Store, or put the database in a state no route can (a corrupt row,
 * a message moved behind the worker's back). The Store hands out no raw database: only storage
 * writes SQL. The test path is the handle test/support/stores.ts kept when it opened the store
 * (openTestStore), looked up here; the helpers below are named for what a test means by them.
 */
const databases = new WeakMap<Store, Kysely<Database>>();

/** Called by test/support/stores.ts for every store it opens. */
export function rememberDatabase(store: Store, db: Kysely<Database>): void {
  databases.set(store, db);
}

/** The database under a store opened by test/support/stores.ts; prefer a named helper below. */
export function databaseOf(store: Store): Kysely<Database> {
  const db = databases.get(store);
  if (db === undefined)
    throw new Error(
      'This store was not opened by test/support/stores.ts (freshStore or openTestStore): its database is out of reach.',
    );
  return db;
}

// --- messages ---------------------------------------------------------------------------------

/** Number of message rows, of one organization or all. */
export async function countMessages(store: Store, orgId?: string): Promise<number> {
  let q = databaseOf(store)
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<number>().as('n'));
  if (orgId !== undefined) q = q.where('org_id', '=', orgId);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

/** Message rows as stored, of one organization or all, oldest first. */
export async function messageRows(store: Store, orgId?: string): Promise<Array<Selectable<MessagesTable>>> {
  let q = databaseOf(store).selectFrom('messages').selectAll();
  if (orgId !== undefined) q = q.where('org_id', '=', orgId);
  return q.orderBy('created_at').orderBy('id').execute();
}

/** One message row as stored; a missing one fails the test. */
export async function messageRow(store: Store, id: string): Promise<Selectable<MessagesTable>> {
  return databaseOf(store).selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** Ids of every stored message (any organization), oldest first. */
export async function messageIds(store: Store, orgId?: string): Promise<string[]> {
  return (await messageRows(store, orgId)).map((r) => r.id);
}

/** Messages per status, over every organization. */
export async function statusCounts(store: Store): Promise<Record<string, number>> {
  const rows = await databaseOf(store)
    .selectFrom('messages')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('status')
    .execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

/** Changes a message behind the worker's back (e.g. marks it sent, or makes it due now). */
export async function setMessageFields(store: Store, id: string, fields: Updateable<MessagesTable>): Promise<void> {
  await databaseOf(store).updateTable('messages').set(fields).where('id', '=', id).execute();
}

/** Every queued message becomes due at `at` (a retry's wait skipped). */
export async function makeQueuedDue(store: Store, at: number): Promise<void> {
  await databaseOf(store).updateTable('messages').set({ next_attempt_at: at }).where('status', '=', 'queued').execute();
}

/** A message row as given, inserted directly (states no route reaches on its own). */
export async function insertMessageRow(
  store: Store,
  row: Insertable<MessagesTable>,
  content: Insertable<MessageContentsTable>,
): Promise<void> {
  const db = databaseOf(store);
  await db.insertInto('messages').values(row).execute();
  await db.insertInto('message_contents').values(content).execute();
}

/** A message row as the send path would leave it, inserted directly. */
export async function insertMessage(
  store: Store,
  orgId: string,
  id: string,
  status: MessageStatus,
  createdAt: number,
  creditTaken: boolean,
  serviceId = 'outbox',
): Promise<void> {
  await insertMessageRow(
    store,
    {
      id,
      org_id: orgId,
      template_id: 'contact',
      service_id: serviceId,
      status,
      status_token_hash: newId('tok'),
      key_type: 'private',
      subject: 'Hi',
      header_message_id: `<${id}@mailroom.test>`,
      credit_taken: creditTaken ? 1 : 0,
      attempts: 0,
      next_attempt_at: status === 'queued' ? createdAt : null,
      lease_until: null,
      last_error: null,
      idempotency_key: null,
      created_at: createdAt,
      updated_at: createdAt,
      sent_at: status === 'sent' ? createdAt + 1000 : null,
    },
    {
      message_id: id,
      content: JSON.stringify({ subject: 'Hi', to: ['someone@example.com'], html: '<p>Hi</p>', text: 'Hi' }),
      attachments: null,
    },
  );
}

// --- contents, recipients, events -------------------------------------------------------------

/** The stored content row of a message (content JSON and attachments JSON), or of the only one. */
export async function contentRow(store: Store, messageId?: string): Promise<Selectable<MessageContentsTable>> {
  let q = databaseOf(store).selectFrom('message_contents').selectAll();
  if (messageId !== undefined) q = q.where('message_id', '=', messageId);
  return q.executeTakeFirstOrThrow();
}

/** Overwrites a message's stored content columns (e.g. with text that is not JSON). */
export async function setContent(
  store: Store,
  messageId: string,
  fields: { content?: string; attachments?: string | null },
): Promise<void> {
  await databaseOf(store).updateTable('message_contents').set(fields).where('message_id', '=', messageId).execute();
}

/** Removes a message's content row, as a crash between writes would. */
export async function deleteContent(store: Store, messageId: string): Promise<void> {
  await databaseOf(store).deleteFrom('message_contents').where('message_id', '=', messageId).execute();
}

/** Recipient rows' states as stored (`pending` included), of one message or of all messages. */
export async function storedRecipientStates(store: Store, messageId?: string): Promise<string[]> {
  let q = databaseOf(store).selectFrom('message_recipients').select('state');
  if (messageId !== undefined) q = q.where('message_id', '=', messageId);
  return (await q.execute()).map((r) => r.state);
}

/** Number of events of a type, over every message. */
export async function countEvents(store: Store, type: string): Promise<number> {
  const row = await databaseOf(store)
    .selectFrom('message_events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('type', '=', type)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Events of a type whose detail contains `detailPart` (any message), as message ids. */
export async function eventMessageIds(store: Store, type: string, detailPart?: string): Promise<string[]> {
  let q = databaseOf(store).selectFrom('message_events').select('message_id').where('type', '=', type);
  if (detailPart !== undefined) q = q.where('detail', 'like', `%${detailPart}%`);
  return (await q.execute()).map((r) => r.message_id);
}

// --- catalog and records ----------------------------------------------------------------------

/** Overwrites a service's stored settings text (e.g. with JSON that does not parse). */
export async function setServiceSettingsText(store: Store, orgId: string, serviceId: string, text: string): Promise<void> {
  await databaseOf(store)
    .updateTable('services')
    .set({ settings: text })
    .where('org_id', '=', orgId)
    .where('id', '=', serviceId)
    .execute();
}

/** Every api_keys row as stored (hashes, never values). */
export async function apiKeyRows(store: Store): Promise<Array<Selectable<Database['api_keys']>>> {
  return databaseOf(store).selectFrom('api_keys').selectAll().execute();
}

/** Keys of the stored idempotency records, sorted. */
export async function idempotencyKeys(store: Store): Promise<string[]> {
  return (await databaseOf(store).selectFrom('idempotency_records').select('key').execute()).map((r) => r.key).sort();
}

// --- locks ------------------------------------------------------------------------------------

/**
 * PostgreSQL: takes an ACCESS EXCLUSIVE lock on the messages table in a transaction of its own
 * and holds it until the returned `release` is called: every statement on the table waits.
 */
export async function lockMessagesTable(store: Store): Promise<() => Promise<void>> {
  let unlock!: () => void;
  const held = new Promise<void>((resolve) => {
    unlock = resolve;
  });
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const holder = databaseOf(store)
    .transaction()
    .execute(async (trx) => {
      await sql`lock table messages in access exclusive mode`.execute(trx);
      locked();
      await held;
    });
  await Promise.race([isLocked, holder]);
  return async () => {
    unlock();
    await holder;
  };
}

/**
 * PostgreSQL: backends queued behind another's lock on rows of `table` in this store's schema
 * (both hold a lock on the table, found by its name in the store's search path, so other test
 * files' schemas do not count): the proof a race test raced instead of running one after the other.
 */
export async function lockWaitsOn(store: Store, table: string): Promise<number> {
  const r = await sql<{ n: string }>`select count(distinct w.pid) as n from pg_locks w
    where w.relation = ${table}::regclass and w.granted
      and exists (select 1 from pg_stat_activity a where a.pid = w.pid and a.wait_event_type = 'Lock')
      and exists (select 1 from pg_locks b where b.relation = ${table}::regclass and b.granted and b.pid =
      any(pg_blocking_pids(w.pid)))`.execute(databaseOf(store));
  return Number(r.rows[0]?.n ?? 0);
}
