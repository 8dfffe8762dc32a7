import { expect } from 'vitest';
import type { Store } from '../../src/storage/store.js';
import { contentRow, countMessages, messageRow } from './db.js';
import type { TestStore } from './stores.js';

/**
 * What the database holds after a request: counts, balances, a message's row, content and
 * events, named for what the send tests ask (./db.ts holds the row-level helpers beneath them).
 */

type HasStore = Pick<TestStore, 'store'>;

/** The delivery tests hold a Store, the send tests an app: the reads below take either. */
const storeOf = (from: HasStore | Store): Store => ('store' in from ? from.store : from);

/** Number of message rows of an organization. */
export function messageCount(t: HasStore, orgId = 'acme'): Promise<number> {
  return countMessages(t.store, orgId);
}

/** Number of message rows of every organization (a refused send must not land in another one). */
export function totalMessageCount(t: HasStore): Promise<number> {
  return countMessages(t.store);
}

/** The organization's credit balance as stored now; an unknown organization fails the test. */
export async function creditsOf(t: HasStore, orgId = 'acme'): Promise<number> {
  const org = await t.store.organizations.get(orgId);
  if (org === undefined) throw new Error(`no organization ${orgId}`);
  return org.credits;
}

/** Event types of a message, in order. */
export async function eventTypes(from: HasStore | Store, messageId: string): Promise<string[]> {
  return (await storeOf(from).messages.events(messageId)).map((e) => e.type);
}

/** What must not change when a send fails before acceptance: messages and credits. */
export interface Snapshot {
  messages: number;
  allMessages: number;
  credits: number;
}

export async function snapshot(t: HasStore, orgId: string): Promise<Snapshot> {
  return { messages: await messageCount(t, orgId), allMessages: await totalMessageCount(t), credits: await creditsOf(t, orgId) };
}

/** Asserts a failed send left no message row and used no credit. */
export async function expectUnchanged(t: HasStore, orgId: string, before: Snapshot): Promise<void> {
  expect(await snapshot(t, orgId)).toEqual(before);
}

/** The rendered email stored with a message (the `content` JSON column). */
export interface StoredContent {
  subject: string;
  from: { name: string; address: string };
  reply_to: Array<{ name: string; address: string }>;
  to: Array<{ name: string; address: string }>;
  cc: Array<{ name: string; address: string }>;
  bcc: Array<{ name: string; address: string }>;
  html: string;
  text: string;
}

export async function storedContent(t: HasStore, messageId: string): Promise<StoredContent> {
  return JSON.parse((await contentRow(t.store, messageId)).content) as StoredContent;
}

export async function storedRow(
  t: HasStore,
  messageId: string,
): Promise<{ key_type: string; subject: string | null; created_at: number; org_id: string }> {
  const row = await messageRow(t.store, messageId);
  return { key_type: row.key_type, subject: row.subject, created_at: Number(row.created_at), org_id: row.org_id };
}

/** Addresses of a stored address list, lower-cased, in order. */
export const addresses = (list: ReadonlyArray<{ address: string }>): string[] => list.map((a) => a.address.toLowerCase());
