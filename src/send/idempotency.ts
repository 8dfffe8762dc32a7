import type { Clock } from '../domain/clock.js';
import { ApiError } from '../errors/api-error.js';
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
  private readonly inFlight = new Map<string, string>();

  constructor(private readonly store: Store, private readonly clock: Clock) {}

  /** Replay → the stored response; conflict → 409; otherwise the caller proceeds and must `end`. */
  async begin(req: IdempotencyRequest): Promise<StoredResponse | undefined> {
    const slot = `${req.orgId}\u0000${req.key}`;
    const running = this.inFlight.get(slot);
    if (running !== undefined) throw conflict(running === req.digest ? 'in_progress' : 'different_body');
    this.inFlight.set(slot, req.digest);
    try {
      const now = this.clock.now();
      const claim: IdempotencyClaim = this.store.dialect === 'postgres'
        ? await this.store.transaction((tx) => tx.idempotency.claim(req.orgId, req.key, req.digest, now))
        : await this.store.idempotency.lookup(req.orgId, req.key, req.digest, now);
      if (claim.kind === 'replay') {
        this.inFlight.delete(slot);
        return claim.response;
      }
      if (claim.kind === 'conflict') throw conflict(claim.reason);
      return undefined;
    } catch (err) {
      this.inFlight.delete(slot);
      throw err;
    }
  }

  /** Inside the acceptance transaction: the response becomes the key's answer for 24 hours. */
  async record(tx: Repos, req: IdempotencyRequest, response: StoredResponse): Promise<void> {
    if (tx.dialect === 'postgres') await tx.idempotency.complete(req.orgId, req.key, response);
    else await tx.idempotency.put(req.orgId, req.key, req.digest, response, this.clock.now(), IDEMPOTENCY_TTL_MS);
  }

  /** After the request, accepted or not. A failure leaves no record: its retry runs afresh. */
  async end(req: IdempotencyRequest, accepted: boolean): Promise<void> {
    this.inFlight.delete(`${req.orgId}\u0000${req.key}`);
    if (!accepted && this.store.dialect === 'postgres') {
      await this.store.idempotency.release(req.orgId, req.key).catch(() => undefined);
    }
  }
}

function conflict(reason: 'in_progress' | 'different_body'): ApiError {
  return new ApiError('idempotency_conflict', {
    message: reason === 'in_progress'
      ? 'A request with this Idempotency-Key is still in progress.'
      : 'This Idempotency-Key was used with a different request body.',
    details: { reason },
  });
}
