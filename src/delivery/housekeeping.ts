import type { BlobStore } from '../blobs/blob-store.js';
import { retentionCutoff, retentionDaysOf } from '../domain/retention.js';
import type { Store } from '../storage/store.js';
import { attachmentRefs } from './stored.js';
import { checkAlerts } from '../alerts/check.js';

/**
 * Messages purged a transaction. The purge shares SQLite's one writer (and a send's group
 * commit) with the accept path, so a batch is a stall of every send that waits behind it.
 * Measured (CPU time of the transaction, 1 M seeded messages, busy 2-core machine): ~0.2 ms
 * a message with its content, recipient and events (each leaves ~25 B-tree entries), so the
 * 500 of before held the writer 80–90 ms; 50 hold it ~12 ms.
 */
export const PURGE_BATCH = 50;
/**
 * Between batches the writer goes back to the sends and reads, and the WAL thread catches up.
 * At 20 ms the purge ran at ~1,700 messages/s, wrote ~40 MB of WAL a second and held the API's
 * p99 at 28–85 ms while it ran; at 100 ms, ~470 messages/s and p99 16 ms (goal < 20 ms:
 * bench:scale, 1 M messages, 150 requests/s, with BACKSTOP_CHECKPOINT_PAGES at 50,000).
 */
export const PURGE_PAUSE_MS = 100;
/**
 * One run purges for at most this long, then leaves the rest to the next run (a minute later):
 * a graceful stop waits for a run under way. At 50 messages per ~108 ms, 5 s a minute is ~2,300
 * a minute, ~3.3 M a day: a day's ~330,000 (issue 16) takes ~145 runs, 10× the pace it arrives.
 */
export const PURGE_BUDGET_MS = 5_000;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Housekeeping, run by the worker a minute apart, in small steps: messages past retention
 * (with their attachment blobs, provider events and webhook deliveries; PURGE_BATCH a
 * transaction, pausing between, for at most PURGE_BUDGET_MS a run; unmatched provider events
 * and webhook test deliveries by their age),
 * idempotency records past 24 h, uploads past their 24 h life. Test-mode messages (issue 27) go
 * sooner, at MAILROOM_TEST_RETENTION_DAYS (never later than the live retention), with the bytes
 * their test inbox kept; the same loop and budget, test ones first. The request log (issue 29)
 * goes by MAILROOM_REQUEST_LOG_DAYS, REQUEST_LOG_PURGE_BATCH rows a transaction, in the budget left.
 * Alert events (with their `webhook.test`-like deliveries) go by the live retention; then the
 * alerts' rate check runs (src/alerts/check.ts).
 */
export async function housekeeping(
  deps: { store: Store; blobs?: BlobStore; retentionDays?: number; testRetentionDays?: number; requestLogDays?: number },
  now: number,
): Promise<void> {
  const { store, blobs, retentionDays: days, testRetentionDays } = deps;
  const dropBlob = async (key: string) => {
    if (blobs !== undefined) await blobs.delete(key).catch(() => undefined);
  };
  const until = performance.now() + PURGE_BUDGET_MS;
  /** Batches until a short one or the run's budget is spent; false when the budget ran out. */
  const purge = async (cutoff: number, mode?: 'test'): Promise<boolean> => {
    for (;;) {
      const purged = await store.transaction((tx) => tx.messages.purgeOlderThan(cutoff, PURGE_BATCH, mode), { durable: false });
      for (const m of purged) {
        // An unreadable list names no blob to drop; the row is gone all the same.
        for (const a of attachmentRefs(m.attachments) ?? []) await dropBlob(a.blob_key);
        if (m.inbox_blob !== null) await dropBlob(m.inbox_blob);
      }
      if (purged.length < PURGE_BATCH) return true;
      if (performance.now() >= until) return false;
      await pause(PURGE_PAUSE_MS);
    }
  };
  let budgetLeft = true;
  if (testRetentionDays !== undefined) {
    const testDays = days === undefined ? testRetentionDays : retentionDaysOf('test', { retentionDays: days, testRetentionDays });
    budgetLeft = await purge(retentionCutoff(now, testDays), 'test');
  }
  if (days !== undefined) {
    if (budgetLeft) await purge(retentionCutoff(now, days));
    // Provider events that matched no message have none to go with: they hold recipient
    // addresses all the same, so they go by the time they were received.
    await store.transaction((tx) => tx.providerEvents.purgeUnmatchedBefore(retentionCutoff(now, days), 500), { durable: false });
    // Webhook deliveries go with their message (purgeOlderThan); `webhook.test` ones have none.
    await store.transaction((tx) => tx.webhookDeliveries.purgeTestsBefore(retentionCutoff(now, days), 500), { durable: false });
    await store.transaction((tx) => tx.alerts.purgeBefore(retentionCutoff(now, days), 500), { durable: false });
  }
  if (deps.requestLogDays !== undefined) await purgeRequestLog(store, retentionCutoff(now, deps.requestLogDays), until);
  await store.transaction((tx) => tx.idempotency.purgeExpired(now), { durable: false });
  for (const upload of await store.uploads.expired(now, 500)) {
    await dropBlob(upload.blob_key);
    await store.transaction((tx) => tx.uploads.delete(upload.id), { durable: false });
  }
  // Alerts (issue 29): the rates over each organization's window, a minute apart like the rest.
  await checkAlerts(store, now);
}

/**
 * Request log rows a transaction. A row has two index entries besides its own (~0.5 KB), against
 * a message's ~25: 500 of them are about as much writer time as PURGE_BATCH messages. A 429
 * flood is capped at 60 rows per organization per minute (src/http/request-recorder.ts), so a day
 * of it is ~86,000 rows per organization: ~170 batches.
 */
export const REQUEST_LOG_PURGE_BATCH = 500;

/** Batches until a short one, pausing between like the message purge; at least one batch even when the budget is spent. */
async function purgeRequestLog(store: Store, cutoff: number, until: number): Promise<void> {
  for (;;) {
    const purged = await store.transaction((tx) => tx.requestLog.purgeOlderThan(cutoff, REQUEST_LOG_PURGE_BATCH), {
      durable: false,
    });
    if (purged < REQUEST_LOG_PURGE_BATCH || performance.now() >= until) return;
    await pause(PURGE_PAUSE_MS);
  }
}
