import type { Service } from '../domain/types.js';
import type { Admission, Breakers } from './breaker.js';
import { ServiceTestError, type Transport, type TransportFactory } from './transport.js';

/**
 * The synthetic probe of a half-open breaker (issue 25): the service test's read-only check
 * (Transport.verify: SMTP's connect/TLS/AUTH/QUIT, an HTTP provider's one authenticated GET)
 * instead of a customer's message, whenever the message can fail over. It runs in the
 * background on a transport built for it and closed after (as the service test does, and in
 * this thread: one check per service per 30 s at most), while the message goes on down its
 * chain. What the breaker hears:
 * - the check passes, or the service answers no (bad credentials, an unverified sender, no such
 *   domain): it is reachable, so the breaker closes, on probation (breaker.ts: the check cannot
 *   tell a relay that greets but refuses mail, so the next transient failure reopens it);
 * - it fails for now (no connection, a timeout, TLS, HTTP 5xx or 429, an SMTP 4xx): the
 *   breaker opens again for another 30 s, as a failed message probe would.
 * A provider whose transport has no check (`outbox`, a test's fake) has no synthetic probe.
 */

export interface Prober {
  /**
   * Probes `service` in the background under `admission` (its breaker's probe, taken by the
   * caller); false, doing nothing, when the provider has no synthetic probe.
   */
  start(service: Service, key: string, admission: Extract<Admission, { kind: 'probe' }>): boolean;
  /** Resolves once every probe started so far has reported (tests, a worker's stop). */
  settled(): Promise<void>;
}

export interface ProberDeps {
  factories: Readonly<Record<string, TransportFactory>>;
  dataDir: string;
  breakers: Breakers;
  logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export function syntheticProber(deps: ProberDeps): Prober {
  const running = new Set<Promise<void>>();
  return {
    start(service, key, admission) {
      const transport = build(deps, service);
      if (transport === undefined) return false;
      const verify = transport.verify;
      if (verify === undefined) {
        void transport.close().catch(() => undefined);
        return false;
      }
      const log = { org: service.org_id, service: service.id };
      const probe: Admission = { ...admission, synthetic: true };
      const done = verify
        .call(transport)
        .then(
          () => report(deps, key, probe, log, undefined),
          (error: unknown) => report(deps, key, probe, log, error),
        )
        .finally(() => transport.close().catch(() => undefined));
      running.add(done);
      void done.finally(() => running.delete(done));
      return true;
    },
    async settled() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}

function build(deps: ProberDeps, service: Service): Transport | undefined {
  const factory = deps.factories[service.provider];
  if (factory === undefined) return undefined;
  try {
    return factory(service, { dataDir: deps.dataDir });
  } catch {
    // Settings it cannot be built from: every send is held as the service's problem anyway.
    return undefined;
  }
}

async function report(
  deps: ProberDeps,
  key: string,
  probe: Admission,
  log: Record<string, unknown>,
  error: unknown,
): Promise<void> {
  const message = error instanceof Error ? error.message : String(error);
  // Anything but a ServiceTestError is a transport's bug, not the service's answer: not now.
  const transient = error !== undefined && (!(error instanceof ServiceTestError) || error.transient);
  try {
    if (transient) {
      await deps.breakers.failed(key, probe, `synthetic probe: ${message}`);
      deps.logger.warn(
        { ...log, outcome: 'probe_failed', reason: message.slice(0, 300) },
        'circuit breaker: the synthetic probe failed; open for another while',
      );
    } else {
      await deps.breakers.succeeded(key, probe);
      deps.logger.info(
        { ...log, outcome: 'probe_passed', ...(error !== undefined ? { answer: message.slice(0, 300) } : {}) },
        'circuit breaker: the synthetic probe reached the service; closed',
      );
    }
  } catch (err) {
    // The breaker's store (Redis) failed: the probe is forgotten after its 2 minutes.
    deps.logger.warn({ ...log, err }, 'circuit breaker store failed; the synthetic probe is not recorded');
  }
}
