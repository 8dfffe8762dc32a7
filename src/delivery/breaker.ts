import { randomUUID } from 'node:crypto';
import type { Clock } from '../domain/clock.js';
import type { Metrics } from '../observability/metrics.js';

/**
 * A circuit breaker per service (issue 14, Failover). A service that keeps failing for now
 * (connection refused, timeouts, 5xx, 4xx SMTP replies: kind `temporary`) is left alone for a
 * while, so its messages go through its failover chain instead of each waiting out its own
 * retry schedule against a provider that is down:
 * - closed: every message may go; `failures` transient failures in a row, all within
 *   `windowMs`, open it (defaults 5 in 60 s: one slow failure a minute is a flaky relay, not an
 *   outage);
 * - open: nothing goes until `halfOpenAfterMs` (30 s) have passed since it opened;
 * - half-open: ONE probe may go; its success closes the breaker, its transient failure opens
 *   it again for another 30 s. A probe whose worker never reports is forgotten after
 *   `probeTtlMs` (2 min: longer than any attempt, the 60 s socket timeout included) and another
 *   may be taken. The probe is the service's synthetic check (probe.ts: the service test's
 *   read-only call) when the message can fail over; else a message. A message whose probe
 *   failed is remembered (`probed`, the last PROBED_KEPT of them), so that on its next attempt it
 *   is told so (`again`) and goes through its chain rather than probing a dead service on every
 *   retry (issue 25: backoffs of 1, 2, 4 min all outlast the 30 s, so a lone message was the
 *   probe every time and never failed over).
 * - closed on probation: a synthetic probe proves the service answers, not that it takes mail
 *   (a relay may greet and then refuse MAIL FROM). So the first transient failure of a message
 *   after it opens the breaker again at once; the first success ends the probation.
 * Any answer of the service other than a transient failure (sent, a bounce, a refusal, an
 * authentication error) proves it reachable: it counts as a success here. Held or failed
 * messages are the outcomes' business, not the breaker's.
 */

export interface BreakerOptions {
  failures: number;
  windowMs: number;
  halfOpenAfterMs: number;
  probeTtlMs: number;
}

export const DEFAULT_BREAKER: Readonly<BreakerOptions> = Object.freeze({
  failures: 5,
  windowMs: 60_000,
  halfOpenAfterMs: 30_000,
  probeTtlMs: 120_000,
});

export type BreakerState = 'closed' | 'half_open' | 'open';

/** What the admin API shows of a service's breaker (times in ms; the route writes ISO). */
export interface BreakerView {
  state: BreakerState;
  openedAt?: number;
  consecutiveFailures: number;
  lastError?: string;
}

/** Whether a message may go through a service now. */
export type Admission =
  | { kind: 'pass' }
  /**
   * The one probe of a half-open breaker; `token` names it when it reports. `messageId`: the
   * message admitted (none for a synthetic probe, `synthetic`); `again`: that message's last
   * probe here failed (it was in `probed`, and is taken out now).
   */
  | { kind: 'probe'; token: string; messageId?: string; again?: boolean; synthetic?: boolean }
  /** Not now: try again at `retryAt` (when a probe may be taken, or the probe under way ends). */
  | { kind: 'refuse'; retryAt: number };

/**
 * While a probe is under way the others wait this long, then look again: a probe answers in
 * seconds when the service is back, and the waiting messages need not lose a whole 30 s.
 */
export const PROBE_WAIT_MS = 5_000;

/** Failed probes' messages a breaker remembers: one per 30 s at most, so 100 are ~50 min of them. */
export const PROBED_KEPT = 100;

export interface Breakers {
  /** `messageId`: the message asking, remembered if it is the probe and fails. */
  admit(key: string, messageId?: string): Promise<Admission>;
  /** The service answered (anything but a transient failure). */
  succeeded(key: string, admission: Admission): Promise<void>;
  /** A transient failure (kind `temporary`) of a message admitted as `admission`. */
  failed(key: string, admission: Admission, reason: string): Promise<void>;
  /** The admitted message never reached the service (its claim was lost): a probe is released. */
  abandon(key: string, admission: Admission): Promise<void>;
  view(key: string): Promise<BreakerView>;
  /** Every breaker this process knows of (and, on Redis, every shared one not closed), for /metrics. */
  snapshot(): Promise<Array<{ key: string; state: BreakerState }>>;
}

/**
 * A breaker opened from closed, or closed again (issue 29: alerts listen). A probe that fails
 * and re-opens a breaker already open is no transition: one outage, one alert. With Redis, the
 * script that opened or closed it says so, so across workers each transition is told once.
 */
export type BreakerTransition = (key: string, to: 'open' | 'closed', lastError: string | undefined) => void;

/** Makes these breakers the ones /metrics and the admin API read, unless some already are. */
export function exposeBreakers(metrics: Pick<Metrics, 'breakers'>, breakers: Breakers): void {
  metrics.breakers.read ??= () => breakers.snapshot();
  metrics.breakers.view ??= (key) => breakers.view(key);
}

export const newProbeToken = (): string => randomUUID();

interface Record_ {
  /** Failure times of the current run, oldest first, at most `failures` of them. */
  run: number[];
  consecutive: number;
  openedAt: number | undefined;
  lastError: string | undefined;
  probe: { token: string; until: number } | undefined;
  /** Messages whose probe failed while this breaker was open, oldest first. */
  probed: string[];
  /** Closed by a synthetic probe: the next transient failure opens it again at once. */
  probation: boolean;
}

const freshRecord = (): Record_ => ({
  run: [],
  consecutive: 0,
  openedAt: undefined,
  lastError: undefined,
  probe: undefined,
  probed: [],
  probation: false,
});

/** The state a record is in at `now`: open turns half-open by time alone. */
function stateOf(r: Record_, now: number, o: BreakerOptions): BreakerState {
  if (r.openedAt === undefined) return 'closed';
  return now >= r.openedAt + o.halfOpenAfterMs ? 'half_open' : 'open';
}

/** One process: the breakers live in a map. */
export class LocalBreakers implements Breakers {
  private readonly records = new Map<string, Record_>();
  private readonly options: BreakerOptions;
  /** Told of each transition (buildServices sets it: alerts). */
  onTransition: BreakerTransition | undefined;

  constructor(
    private readonly clock: Clock,
    options: Partial<BreakerOptions> = {},
  ) {
    this.options = { ...DEFAULT_BREAKER, ...options };
  }

  private record(key: string): Record_ {
    let r = this.records.get(key);
    if (r === undefined) {
      r = freshRecord();
      this.records.set(key, r);
    }
    return r;
  }

  async admit(key: string, messageId?: string): Promise<Admission> {
    const r = this.records.get(key);
    if (r === undefined) return { kind: 'pass' };
    const now = this.clock.now();
    const state = stateOf(r, now, this.options);
    if (state === 'closed') return { kind: 'pass' };
    if (state === 'open') return { kind: 'refuse', retryAt: (r.openedAt ?? now) + this.options.halfOpenAfterMs };
    if (r.probe !== undefined && r.probe.until > now) return { kind: 'refuse', retryAt: now + PROBE_WAIT_MS };
    const token = newProbeToken();
    r.probe = { token, until: now + this.options.probeTtlMs };
    if (messageId === undefined) return { kind: 'probe', token };
    const again = r.probed.includes(messageId);
    if (again) r.probed = r.probed.filter((id) => id !== messageId);
    return { kind: 'probe', token, messageId, ...(again ? { again } : {}) };
  }

  async succeeded(key: string, admission: Admission): Promise<void> {
    const r = this.records.get(key);
    if (r === undefined) return;
    // Only the probe closes an open breaker: a send admitted before it opened proves little.
    if (r.openedAt !== undefined && !this.isProbe(r, admission)) return;
    // Kept, reset: the gauge goes back to 0 rather than vanishing.
    const probation = r.openedAt !== undefined && admission.kind === 'probe' && admission.synthetic === true;
    this.records.set(key, { ...freshRecord(), probation });
    if (r.openedAt !== undefined) this.onTransition?.(key, 'closed', r.lastError);
  }

  async failed(key: string, admission: Admission, reason: string): Promise<void> {
    const r = this.record(key);
    const now = this.clock.now();
    r.lastError = reason.slice(0, 500);
    r.consecutive += 1;
    if (r.openedAt !== undefined) {
      if (this.isProbe(r, admission)) {
        r.openedAt = now;
        r.probe = undefined;
        if (admission.kind === 'probe' && admission.messageId !== undefined)
          r.probed = [...r.probed, admission.messageId].slice(-PROBED_KEPT);
      }
      return;
    }
    if (r.probation) {
      r.probation = false;
      r.openedAt = now;
      r.run = [];
      this.onTransition?.(key, 'open', r.lastError);
      return;
    }
    r.run = [...r.run, now].filter((t) => t > now - this.options.windowMs).slice(-this.options.failures);
    if (r.run.length >= this.options.failures) {
      r.openedAt = now;
      r.run = [];
      this.onTransition?.(key, 'open', r.lastError);
    }
  }

  async abandon(key: string, admission: Admission): Promise<void> {
    const r = this.records.get(key);
    if (r !== undefined && this.isProbe(r, admission)) r.probe = undefined;
  }

  async view(key: string): Promise<BreakerView> {
    const r = this.records.get(key);
    if (r === undefined) return { state: 'closed', consecutiveFailures: 0 };
    return {
      state: stateOf(r, this.clock.now(), this.options),
      ...(r.openedAt !== undefined ? { openedAt: r.openedAt } : {}),
      consecutiveFailures: r.consecutive,
      ...(r.lastError !== undefined ? { lastError: r.lastError } : {}),
    };
  }

  async snapshot(): Promise<Array<{ key: string; state: BreakerState }>> {
    const now = this.clock.now();
    return [...this.records].map(([key, r]) => ({ key, state: stateOf(r, now, this.options) }));
  }

  private isProbe(r: Record_, admission: Admission): boolean {
    return admission.kind === 'probe' && r.probe?.token === admission.token;
  }
}
