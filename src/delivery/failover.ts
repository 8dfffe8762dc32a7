import type { Service } from '../domain/types.js';
import { CorruptRowError } from '../storage/json.js';
import type { Store } from '../storage/store.js';
import type { BatchContext } from './batch-context.js';
import type { Admission, Breakers } from './breaker.js';
import { readSmtpSettings } from './smtp-settings.js';

/**
 * Failover (issue 14): a service's settings may name `failover: [service_id, …]`, tried in
 * order when its breaker is open, and `failover_on_service_error: true`, which also sends
 * through the next service at once when the first answers with a service error (held
 * otherwise). The settings are validated where they are written (config file, admin API); here
 * they are only read, and anything else is ignored.
 */

export const UNAVAILABLE = 'every service in the failover chain is unavailable (circuit breaker open); waiting, not failed';

export interface FailoverSettings {
  chain: string[];
  onServiceError: boolean;
}

export function failoverSettings(service: Service): FailoverSettings {
  const raw = service.settings.failover;
  const chain = Array.isArray(raw) ? raw.filter((id): id is string => typeof id === 'string' && id !== '') : [];
  return { chain, onServiceError: service.settings.failover_on_service_error === true };
}

export const keyOf = (service: Pick<Service, 'org_id' | 'id'>): string => `${service.org_id}/${service.id}`;

/**
 * The services a message may go through, in order: its own, then its chain's that exist and
 * can be read, each once (a chain naming the service itself or a service twice adds nothing).
 * Only the first service's chain counts: chains do not nest. Failover services are read once
 * per batch (kept in the batch's context).
 */
export async function serviceChain(store: Store, context: BatchContext, primary: Service): Promise<Service[]> {
  const { chain } = failoverSettings(primary);
  const out = [primary];
  const seen = new Set([primary.id]);
  for (const id of chain) {
    if (seen.has(id)) continue;
    seen.add(id);
    const key = `${primary.org_id}/${id}`;
    if (!context.services.has(key)) context.services.set(key, await readFailoverService(store, primary.org_id, id));
    const s = context.services.get(key);
    if (s !== undefined && !('unreadable' in s)) out.push(s);
  }
  return out;
}

/** A failover service as the batch needs it; one that cannot be read is left out of the chain. */
async function readFailoverService(store: Store, orgId: string, id: string): Promise<Service | undefined | { unreadable: string }> {
  try {
    const s = await store.services.get(orgId, id);
    if (s?.provider !== 'smtp') return s;
    const smtp = readSmtpSettings(s.settings);
    return smtp.ok ? s : { unreadable: smtp.problem };
  } catch (err) {
    if (err instanceof CorruptRowError) return { unreadable: err.message };
    throw err;
  }
}

export interface Route {
  /** Where in the chain: the next try after a service error starts after it. */
  index: number;
  service: Service;
  key: string;
  admission: Admission;
}

/**
 * The first service from `from` on whose breaker lets this message through (closed, or
 * half-open and this message is the probe). None: `retryAt`, the soonest a breaker of the
 * chain may let one through, or undefined when nothing is left to try.
 */
export async function pickRoute(breakers: Breakers, chain: readonly Service[], from: number, onBreakerError: (err: unknown) => void): Promise<Route | { retryAt: number | undefined }> {
  let retryAt: number | undefined;
  for (let index = from; index < chain.length; index++) {
    const service = chain[index];
    if (service === undefined) continue;
    const key = keyOf(service);
    let admission: Admission;
    try {
      admission = await breakers.admit(key);
    } catch (err) {
      // The breaker's store (Redis) failed: send as if there were no breaker.
      onBreakerError(err);
      admission = { kind: 'pass' };
    }
    if (admission.kind !== 'refuse') return { index, service, key, admission };
    retryAt = Math.min(retryAt ?? Infinity, admission.retryAt);
  }
  return { retryAt };
}
