import type { Clock } from '../domain/clock.js';
import { refusedMailboxes } from '../domain/suppression-policy.js';
import { refundsCredit } from '../credits/refund-policy.js';
import { countApplied } from '../events/apply.js';
import { settleEarlyEvents } from '../events/early.js';
import type { Metrics } from '../observability/metrics.js';
import type { ClaimedMessage } from '../storage/queue-types.js';
import type { Repos, Store } from '../storage/store.js';
import type { Recorded } from '../events/apply.js';
import { allRecipients, type RenderedEmail } from '../templates/render.js';
import type { Leases } from './leases.js';
import { settleApart, toAddresses, type PlanInput } from './recipients.js';
import { DEFAULT_RETRY, type RetryPolicy, retryAt } from './retry.js';
import type { DeliveryError } from './transport.js';

export interface OutcomeDeps {
  store: Store;
  clock: Clock;
  metrics: Metrics;
  logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  retry?: RetryPolicy;
  random?: () => number;
}

/** How long `sent` outcomes gather before one write records them all (see Outcomes.sent). */
const SENT_BUFFER_MS = 10;

/** Outcome writes: nobody waits on them, so they may share a commit with others. */
const BACKGROUND = { background: true } as const;

interface SentItem {
  m: ClaimedMessage;
  detail: Record<string, unknown>;
  providerMessageId: string | undefined;
}

/** The final states a worker writes for a message as a whole, other than sent and bounced. */
export type FinalStatus = 'failed' | 'held_service_error' | 'discarded';

/**
 * Records what an attempt came to. Each write first lets go of the message's claim (Leases), so
 * it names the lease the database has. `sent` and retry writes run in the background; `stop`
 * and `runOnce` wait for them (drain).
 */
export class Outcomes {
  private readonly pending = new Set<Promise<void>>();
  private sentBuffer: SentItem[] = [];

  constructor(
    private readonly deps: OutcomeDeps,
    private readonly leases: Leases,
  ) {}

  /** Resolves once every background write started so far has landed (or failed, logged). */
  async drain(): Promise<void> {
    await Promise.all(this.pending);
  }

  /**
   * `sent` outcomes are gathered for SENT_BUFFER_MS and recorded together (markSentMany): one
   * event-loop turn gathered ~2 at 1,500 msg/s, and recording them took ~16 µs of SQL a message;
   * 10 ms gathers ~15, which share one UPDATE and one event INSERT.
   */
  sent(m: ClaimedMessage, detail: Record<string, unknown>, providerMessageId?: string): void {
    void this.leases.letGo(m);
    this.sentBuffer.push({ m, detail, providerMessageId });
    if (this.sentBuffer.length === 1) {
      const batch = this.sentBuffer;
      const write = new Promise<void>((resolve) => setTimeout(resolve, SENT_BUFFER_MS))
        .then(() => this.leases.settled())
        .then(async () => {
          this.sentBuffer = [];
          const now = this.deps.clock.now();
          const early = await this.deps.store.transaction((tx) => this.markSent(tx, batch, now), BACKGROUND);
          if (early.length > 0) {
            countApplied(this.deps.metrics, early);
            this.deps.logger.info(
              { events: early.map((r) => ({ message_id: r.message.id, type: r.event.type, source: r.event.source })) },
              'provider events that came before their message was settled were applied',
            );
          }
        });
      this.inBackground(m, write);
    }
  }

  /**
   * The `sent` write of a batch, and in the same transaction the provider events that came
   * before it (src/events/early.ts: a bounce can be reported before `sent` is written, naming
   * the provider id written here). The ids are locked first, as the intake locks them.
   */
  private async markSent(tx: Repos, batch: readonly SentItem[], now: number): Promise<Recorded[]> {
    const named = batch.flatMap((b) =>
      b.providerMessageId !== undefined ? [{ orgId: b.m.org_id, providerMessageId: b.providerMessageId }] : [],
    );
    await tx.providerEvents.lockProviderIds(named);
    const moved = new Set(
      await tx.queue.markSentMany(
        batch.map((b) => ({
          id: b.m.id,
          lease: b.m.lease_until,
          detail: b.detail,
          ...(b.providerMessageId !== undefined ? { providerMessageId: b.providerMessageId } : {}),
        })),
        now,
      ),
    );
    return settleEarlyEvents(
      tx,
      batch
        .filter((b) => moved.has(b.m.id))
        .map((b) => ({ id: b.m.id, orgId: b.m.org_id, providerMessageId: b.providerMessageId })),
      now,
    );
  }

  /** A send refused or failed as a whole: retried later, bounced, held or failed by its kind. */
  async failed(m: ClaimedMessage, err: DeliveryError, email: RenderedEmail): Promise<void> {
    const { store, clock, metrics } = this.deps;
    await this.leases.letGo(m);
    const now = clock.now();
    const reason = err.message.slice(0, 500);
    if (err.kind === 'temporary') {
      const at = retryAt(this.deps.retry ?? DEFAULT_RETRY, m, now, err.options.retryAfterMs, this.deps.random);
      if (at !== undefined) {
        this.inBackground(
          m,
          store.transaction((tx) => tx.queue.markRetry(m.id, m.lease_until, now, at, reason), BACKGROUND),
        );
        metrics.deferred.inc({ service: m.service_id });
        return;
      }
      await this.finish(m, 'failed', `gave up after ${m.attempts} attempts: ${reason}`);
      return;
    }
    if (err.kind === 'mailbox') {
      // A hard bounce: whom it suppresses is the suppression policy's (refusedMailboxes).
      const bounced = refusedMailboxes(err.recipients, { owed: allRecipients(email), to: toAddresses(email) });
      await store.transaction(async (tx) => {
        if (await tx.queue.markFinal(m.id, m.lease_until, 'bounced', now, reason)) {
          for (const address of bounced) await tx.suppressions.add(m.org_id, address, 'hard_bounce', now, m.id);
        }
      });
      metrics.bounced.inc({ service: m.service_id });
      return;
    }
    await this.finish(m, err.kind === 'service' ? 'held_service_error' : 'failed', reason);
  }

  /**
   * No service of the message's failover chain may take it now (their breakers are open): back
   * in the queue for `at`, the attempt not counted (queue.markWaiting). Never failed for this.
   */
  async wait(m: ClaimedMessage, at: number, reason: string): Promise<void> {
    const { store, clock, metrics } = this.deps;
    await this.leases.letGo(m);
    const now = clock.now();
    this.inBackground(
      m,
      store.transaction((tx) => tx.queue.markWaiting(m.id, m.lease_until, now, at, reason), BACKGROUND),
    );
    metrics.deferred.inc({ service: m.service_id });
  }

  /** Final states; whether the credit comes back is the refund policy's (refundsCredit). */
  async finish(m: ClaimedMessage, status: FinalStatus, reason: string, suppressed: readonly string[] = []): Promise<void> {
    await this.leases.letGo(m);
    const now = this.deps.clock.now();
    await this.deps.store.transaction(async (tx) => {
      const moved = await tx.queue.markFinal(m.id, m.lease_until, status, now, reason);
      if (moved && suppressed.length > 0) {
        await tx.queue.setRecipientStates(
          m.id,
          suppressed.map((address) => ({ address, state: 'suppressed', reason: 'on the suppression list' })),
          now,
        );
      }
      if (moved && refundsCredit(status, m.credit_taken)) await tx.credits.refund(m.org_id);
    });
    if (status === 'failed') this.deps.metrics.failed.inc({ service: m.service_id });
  }

  /** An attempt whose recipients parted ways: recorded per recipient (settleApart). */
  async settle(m: ClaimedMessage, input: Omit<PlanInput, 'retryAt' | 'attempts'>, log: Record<string, unknown>): Promise<void> {
    await this.leases.letGo(m);
    await settleApart(this.deps, m, input, log);
  }

  /**
   * An outcome write the send does not wait for: the next message may start while it commits
   * (waiting held a send slot ~10 ms per message, 40% of the worker's time). The message keeps
   * its lease until the write lands; if it never does, the lease expires and the reaper
   * requeues it (at-least-once).
   */
  private inBackground(m: ClaimedMessage, write: Promise<unknown>): void {
    const p: Promise<void> = write
      .then(
        () => undefined,
        (err: unknown) => this.deps.logger.error({ err, message_id: m.id }, 'recording a delivery outcome failed'),
      )
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
  }
}
