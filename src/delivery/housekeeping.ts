import type { BlobStore } from '../blobs/blob-store.js';
import { retentionCutoff } from '../domain/retention.js';
import type { Store } from '../storage/store.js';
import { attachmentRefs } from './stored.js';

/**
 * Housekeeping, run by the worker a minute apart, in small steps: messages past retention
 * (with their attachment blobs, provider events and webhook deliveries; unmatched provider events
 * and webhook test deliveries by their age),
 * idempotency records past 24 h, uploads past their 24 h life.
 */
export async function housekeeping(deps: { store: Store; blobs?: BlobStore; retentionDays?: number }, now: number): Promise<void> {
  const { store, blobs, retentionDays: days } = deps;
  const dropBlob = async (key: string) => {
    if (blobs !== undefined) await blobs.delete(key).catch(() => undefined);
  };
  if (days !== undefined) {
    const purged = await store.transaction((tx) => tx.messages.purgeOlderThan(retentionCutoff(now, days), 500), { durable: false });
    for (const m of purged) {
      // An unreadable list names no blob to drop; the row is gone all the same.
      for (const a of attachmentRefs(m.attachments) ?? []) await dropBlob(a.blob_key);
    }
    // Provider events that matched no message have none to go with: they hold recipient
    // addresses all the same, so they go by the time they were received.
    await store.transaction((tx) => tx.providerEvents.purgeUnmatchedBefore(retentionCutoff(now, days), 500), { durable: false });
    // Webhook deliveries go with their message (purgeOlderThan); `webhook.test` ones have none.
    await store.transaction((tx) => tx.webhookDeliveries.purgeTestsBefore(retentionCutoff(now, days), 500), { durable: false });
  }
  await store.transaction((tx) => tx.idempotency.purgeExpired(now), { durable: false });
  for (const upload of await store.uploads.expired(now, 500)) {
    await dropBlob(upload.blob_key);
    await store.transaction((tx) => tx.uploads.delete(upload.id), { durable: false });
  }
}
