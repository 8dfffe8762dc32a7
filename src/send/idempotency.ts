import type { Clock } from '../domain/clock.js';
import { ApiError } from '../errors/api-error.js';
import { storageTrouble } from '../errors/storage-trouble.js';
import { IDEMPOTENCY_TTL_MS, type IdempotencyClaim, type StoredResponse } from '../storage/idempotency.js';
import type { Repos, Store } from '../storage/store.js';

export interface IdempotencyRequest {
  orgId: string;
  key: string;
  digest: string;
}

/**
 * The three idempotency rules around one send. Requests in flight in this process are known in
 * memory, so a concurrent duplicate gets 409 at once. Across processes, PostgreSQL also holds a
 * durable claim row, taken before any other check, so a duplicate on another API process gets
 * the same 409. SQLite serves one API process, where memory is the whole truth: its record is
 * written only with the message, in the same commit, which spares every send one disk flush.
 */
export class IdempotencyGuard {
  /** Requests in flight in this process: their body digest, and the time of their claim row (PostgreSQL). */
  private readonly inFlight = new Map<string, { digest: string; claimedAt?: number }>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly sleep: (ms: number) => Promise<void> = defaultSleep,
  ) {}

  /** Replay → the stored response; conflict → 409; otherwise the caller proceeds and must `end`. */
  async begin(req: IdempotencyRequest): Promise<StoredResponse | undefined> {
    const slot = slotOf(req);
    const running = this.inFlight.get(slot);
    if (running !== undefined) throw conflict(running.digest === req.digest ? 'in_progress' : 'different_body');
    const entry: { digest: string; claimedAt?: number } = { digest: req.digest };
    this.inFlight.set(slot, entry);
    try {
      const now = this.clock.now();
      const claim: IdempotencyClaim =
        this.store.dialect === 'postgres'
          ? await this.store.transaction((tx) => tx.idempotency.claim(req.orgId, req.key, req.digest, now))
          : await this.store.idempotency.lookup(req.orgId, req.key, req.digest, now);
      if (claim.kind === 'replay') {
        this.inFlight.delete(slot);
        return claim.response;
      }
      if (claim.kind === 'conflict') throw conflict(claim.reason);
      if (claim.at !== undefined) entry.claimedAt = claim.at;
      return undefined;
    } catch (err) {
      this.inFlight.delete(slot);
      throw err;
    }
  }

  /**
   * Inside the acceptance transaction: the response becomes the key's answer for 24 hours. On
   * PostgreSQL only while the claim is still this request's (see IN_FLIGHT_LEASE_MS): else 409,
   * and the transaction, message included, rolls back.
   */
  async record(tx: Repos, req: IdempotencyRequest, response: StoredResponse): Promise<void> {
    if (tx.dialect === 'postgres') {
      const claimedAt = this.inFlight.get(slotOf(req))?.claimedAt;
      if (!(await tx.idempotency.complete(req.orgId, req.key, response, claimedAt))) throw conflict('in_progress');
    } else {
      await tx.idempotency.put(req.orgId, req.key, req.digest, response, this.clock.now(), IDEMPOTENCY_TTL_MS);
    }
  }

  /**
   * After the request, accepted or not. A failure leaves no record: its retry runs afresh. On
   * PostgreSQL the claim row is removed; if the database is what failed, that is retried in the
   * background (0.5, 1, 2, 4, 8 s: 15.5 s, within the claim's 20 s lease), so a retry once it
   * is back runs at once instead of meeting 409 `in_progress` for the rest of the lease.
   */
  async end(req: IdempotencyRequest, accepted: boolean): Promise<void> {
    const slot = slotOf(req);
    const claimedAt = this.inFlight.get(slot)?.claimedAt;
    this.inFlight.delete(slot);
    if (accepted || this.store.dialect !== 'postgres') return;
    const release = () => this.store.idempotency.release(req.orgId, req.key, claimedAt);
    try {
      await release();
    } catch (err) {
      if (storageTrouble(err) === undefined) return;
      void this.releaseLater(release);
    }
  }

  private async releaseLater(release: () => Promise<void>): Promise<void> {
    for (const ms of RELEASE_RETRIES_MS) {
      await this.sleep(ms);
      try {
        await release();
        return;
      } catch {
        // Still unavailable: the next try, or the lease ends the claim anyway.
      }
    }
  }
}

const RELEASE_RETRIES_MS = [500, 1_000, 2_000, 4_000, 8_000];

const defaultSleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });

const slotOf = (req: IdempotencyRequest): string => `${req.orgId}\u0000${req.key}`;

function conflict(reason: 'in_progress' | 'different_body'): ApiError {
  return new ApiError('idempotency_conflict', {
    message:
      reason === 'in_progress'
        ? 'A request with this Idempotency-Key is still in progress.'
        : 'This Idempotency-Key was used with a different request body.',
    details: { reason },
  });
}
