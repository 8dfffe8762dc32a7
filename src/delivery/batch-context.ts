import type { Service } from '../domain/types.js';
import { CorruptRowError } from '../storage/json.js';
import type { ClaimedMessage, SettledState } from '../storage/queue-types.js';
import type { Store } from '../storage/store.js';
import { allRecipients } from '../templates/render.js';
import { readSmtpSettings } from './smtp-settings.js';
import { readStoredContent, type StoredContent } from './stored.js';

/** A service's stored row that cannot be read back. */
export interface UnreadableService {
  unreadable: string;
}

/** What every message of a claimed batch needs from the database, read once for the batch. */
export interface BatchContext {
  /** Each service of the batch: absent if deleted, a reason if its stored row is unreadable. */
  services: Map<string, Service | undefined | UnreadableService>;
  /** Per organization, the batch's recipients that are suppressed now. */
  suppressed: Map<string, Set<string>>;
  /** Each message's stored email, read on its own: one unreadable row fails only its message. */
  contents: Map<string, StoredContent>;
  /** Recipients with a state of their own, by message (only messages whose recipients parted ways). */
  recipientStates: Map<string, Map<string, SettledState>>;
}

export const serviceKey = (m: Pick<ClaimedMessage, 'org_id' | 'service_id'>): string => `${m.org_id}/${m.service_id}`;

const unreadable = (why: string): UnreadableService => ({
  unreadable: `the service's stored settings cannot be read (${why}); write the service again to release its messages`,
});

/**
 * A service as the batch needs it. A row that cannot be read back (corrupt JSON, or SMTP
 * settings the admin API would refuse) is the service's problem, like a wrong password: its
 * messages are held until an operator writes the service again, instead of the whole batch
 * going back to the queue on every poll. Any other error (the database failing for a moment)
 * still propagates and gives the batch back.
 */
async function readService(store: Store, orgId: string, id: string): Promise<Service | undefined | UnreadableService> {
  let service: Service | undefined;
  try {
    service = await store.services.get(orgId, id);
  } catch (err) {
    if (err instanceof CorruptRowError) return unreadable(err.message);
    throw err;
  }
  if (service?.provider !== 'smtp') return service;
  const smtp = readSmtpSettings(service.settings);
  return smtp.ok ? service : unreadable(smtp.problem);
}

/**
 * The services, each message's content, which recipients are suppressed (a bounce may have
 * arrived since the message was accepted) and which were settled apart by an earlier attempt:
 * a few queries per batch instead of a few per message.
 */
export async function readBatchContext(store: Store, batch: readonly ClaimedMessage[]): Promise<BatchContext> {
  const services: BatchContext['services'] = new Map();
  const recipientsByOrg = new Map<string, Set<string>>();
  const contents = new Map<string, StoredContent>();
  for (const m of batch) {
    const key = serviceKey(m);
    if (!services.has(key)) services.set(key, await readService(store, m.org_id, m.service_id));
    const content = readStoredContent(m.content, m.attachments);
    contents.set(m.id, content);
    if (!content.ok) continue;
    const set = recipientsByOrg.get(m.org_id) ?? new Set<string>();
    for (const r of allRecipients(content.email)) set.add(r);
    recipientsByOrg.set(m.org_id, set);
  }
  const suppressed = new Map<string, Set<string>>();
  for (const [org, recipients] of recipientsByOrg)
    suppressed.set(org, new Set(await store.suppressions.findAmong(org, [...recipients])));
  // Only an attempt after the first can find recipients settled apart (an attempt writes them):
  // a batch of first attempts, the usual case, costs no query here.
  const retried = batch.filter((m) => m.attempts > 1).map((m) => m.id);
  const recipientStates = await store.queue.recipientStates(retried);
  return { services, suppressed, contents, recipientStates };
}
