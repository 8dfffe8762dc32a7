import type { Service } from '../domain/types.js';
import { CorruptRowError } from '../storage/json.js';
import type { Store } from '../storage/store.js';
import type { BatchContext } from './batch-context.js';
import { PROBE_WAIT_MS, type Admission, type Breakers } from './breaker.js';
import type { Prober } from './probe.js';
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
async function readFailoverService(
  store: Store,
  orgId: string,
  id: string,
): Promise<Service | undefined | { unreadable: string }> {
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

export interface PickOptions {
  /** The message asking: a message whose last probe of a service failed is not its probe again while a failover can take it. */
  messageId?: string;
  /** Synthetic probes (probe.ts): where a service has one, a message that can fail over is never its probe. */
  prober?: Prober;
  now(): number;
  onBreakerError(err: unknown): void;
}

/**
 * The first service from `from` on whose breaker lets this message through (closed, or
 * half-open and this message is the probe). None: `retryAt`, the soonest a breaker of the
 * chain may let one through, or undefined when nothing is left to try.
 *
 * A half-open breaker whose service has later services in the chain (a failover may take the
 * message) is probed without this message where it can be (issue 25): by the synthetic probe,
 * started in the background while the message goes on down the chain; or, without one, by
 * another message when this one was the probe that last failed there (`again`). Only when no
 * later service takes it does such a message probe the service itself, rather than wait.
 */
export async function pickRoute(
  breakers: Breakers,
  chain: readonly Service[],
  from: number,
  options: PickOptions,
): Promise<Route | { retryAt: number | undefined }> {
  const admit = async (key: string): Promise<Admission> => {
    try {
      return await breakers.admit(key, options.messageId);
    } catch (err) {
      // The breaker's store (Redis) failed: send as if there were no breaker.
      options.onBreakerError(err);
      return { kind: 'pass' };
    }
  };
  let retryAt: number | undefined;
  let declined: number | undefined;
  for (let index = from; index < chain.length; index++) {
    const service = chain[index];
    if (service === undefined) continue;
    const key = keyOf(service);
    const admission = await admit(key);
    if (admission.kind === 'refuse') {
      retryAt = Math.min(retryAt ?? Infinity, admission.retryAt);
      continue;
    }
    if (admission.kind === 'probe' && index + 1 < chain.length) {
      if (options.prober?.start(service, key, admission) === true) {
        // Held by the synthetic probe: look again when a probe under way would be waited for.
        retryAt = Math.min(retryAt ?? Infinity, options.now() + PROBE_WAIT_MS);
        continue;
      }
      if (admission.again === true) {
        await breakers.abandon(key, admission).catch(options.onBreakerError);
        declined ??= index;
        continue;
      }
    }
    return { index, service, key, admission };
  }
  const service = declined === undefined ? undefined : chain[declined];
  if (declined !== undefined && service !== undefined) {
    // Nothing later in the chain takes it: probing again beats waiting.
    const key = keyOf(service);
    const admission = await admit(key);
    if (admission.kind !== 'refuse') return { index: declined, service, key, admission };
    retryAt = Math.min(retryAt ?? Infinity, admission.retryAt);
  }
  return { retryAt };
}
