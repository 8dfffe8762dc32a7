import type { Clock } from '../domain/clock.js';
import type { Store } from '../storage/store.js';

/** delivery/breaker.ts's BreakerTransition, spelled out: delivery imports alerts (housekeeping), not the other way. */
type BreakerTransition = (key: string, to: 'open' | 'closed', lastError: string | undefined) => void;

export interface BreakerAlertLogger {
  error(obj: object, msg: string): void;
}

/**
 * The breakers' transitions as alerts (issue 29): opening fires `alert.breaker_open` for the
 * service (when the organization has it on), closing resolves it. Called from the delivery
 * path, so it never throws and never makes the attempt wait: the write goes on in the
 * background and a failure is logged. The state row makes it once per opening even when
 * several processes with breakers of their own (no Redis) see the same outage.
 */
export function breakerAlerts(
  store: Store,
  clock: Clock,
  logger: BreakerAlertLogger,
): {
  onTransition: BreakerTransition;
  /** Resolves when the writes started so far have ended (tests). */
  idle(): Promise<void>;
} {
  const pending = new Set<Promise<unknown>>();
  const onTransition: BreakerTransition = (key, to, lastError) => {
    const slash = key.indexOf('/');
    if (slash <= 0) return;
    const org = key.slice(0, slash);
    const service = key.slice(slash + 1);
    const detail = { service_id: service, ...(lastError !== undefined ? { reason: lastError } : {}) };
    const now = clock.now();
    const work = store
      .transaction(async (tx) => {
        if (to === 'closed') return tx.alerts.resolve(org, 'breaker_open', service, detail, now);
        if (!(await tx.alerts.settings(org)).breaker_open) return undefined;
        return tx.alerts.fire(org, 'breaker_open', service, detail, now);
      })
      .catch((err: unknown) => logger.error({ err, org, service }, 'breaker alert could not be recorded'))
      .finally(() => pending.delete(work));
    pending.add(work);
  };
  return {
    onTransition,
    idle: async () => {
      while (pending.size > 0) await Promise.all([...pending]);
    },
  };
}
