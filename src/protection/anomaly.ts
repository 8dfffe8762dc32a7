import type { Config } from '../config/env.js';
import type { Counter, LimiterStore } from './store.js';

/** Length of the window whose count is compared with the baseline. */
export const SPIKE_WINDOW_MS = 10_000;
/** The baseline: admitted requests of the 10 whole minutes before the current minute. */
export const BASELINE_MINUTES = 10;
/** While slowed, an organization's public-key requests pass one per this period. */
export const SLOW_PERIOD_MS = 2_000;

const MINUTE_MS = 60_000;
const WINDOWS_PER_BASELINE = (BASELINE_MINUTES * MINUTE_MS) / SPIKE_WINDOW_MS;

export type AnomalySettings = Config['limits']['anomaly'];

export interface AnomalyState {
  /** Whether the organization's public-key requests are being slowed now. */
  slowed: boolean;
  /** The 10-second count that was just observed, and the threshold it was compared with. */
  count: number;
  threshold: number;
}

/**
 * Anomaly detection for an organization's public-key requests (spec, Request rate limits 3–4).
 *
 * Definition. Every public-key request that passed the template lookup and the CAPTCHA check
 * is an *attempt*; attempts are counted in fixed 10-second windows. Attempts that are then
 * admitted (not refused by any limit) are also counted per minute: the *baseline* is the
 * average number of admitted requests per 10 seconds over the 10 whole minutes before the
 * current minute. A *spike* is a 10-second window whose attempts reach `minRequests`
 * (MAILROOM_ANOMALY_MIN_REQUESTS, default 50) and exceed `factor` (MAILROOM_ANOMALY_FACTOR,
 * default 10) times the baseline.
 *
 * Response. A spike slows the organization: its public-key requests pass one per 2 seconds
 * (fixed 2-second windows; others get 429 `rate_limited`, `details.scope = anomaly`, with
 * `Retry-After`) until `cooldownMs` (MAILROOM_ANOMALY_COOLDOWN_SECONDS, default 60) have passed
 * since the last 10-second window that was a spike. Refused attempts keep counting toward the
 * spike but never toward the baseline, so a sustained flood stays slowed instead of becoming
 * "normal", and the slowing ends a cool-down after the flood stops.
 */
export class AnomalyDetector {
  constructor(private readonly settings: AnomalySettings) {}

  get enabled(): boolean {
    return this.settings.enabled;
  }

  /** Records one attempt of `orgId` at `now` and says whether the organization is slowed. */
  async observe(store: LimiterStore, orgId: string, now: number): Promise<AnomalyState> {
    const minute = Math.floor(now / MINUTE_MS);
    const flag = `an:slow:${orgId}`;
    const baselineKeys = Array.from({ length: BASELINE_MINUTES }, (_, i) => minuteKey(orgId, minute - BASELINE_MINUTES + i));
    const { count, values } = await store.incrAndRead(
      `an:win:${orgId}:${Math.floor(now / SPIKE_WINDOW_MS)}`,
      SPIKE_WINDOW_MS * 2,
      [flag, ...baselineKeys],
    );
    let slowUntil = values[0] ?? 0;
    const admitted = values.slice(1).reduce((a, b) => a + b, 0);
    const threshold = Math.max(
      this.settings.minRequests,
      Math.floor((this.settings.factor * admitted) / WINDOWS_PER_BASELINE) + 1,
    );
    if (count >= threshold) {
      // The cool-down runs from the end of the window that was a spike.
      const until = (Math.floor(now / SPIKE_WINDOW_MS) + 1) * SPIKE_WINDOW_MS + this.settings.cooldownMs;
      if (until > slowUntil) {
        slowUntil = until;
        await store.setMax(flag, until, until - now + MINUTE_MS);
      }
    }
    return { slowed: slowUntil > now, count, threshold };
  }

  /** Counters the admitted request adds to: the slow gate when slowed, and the baseline. */
  counters(orgId: string, now: number, state: AnomalyState): { gate: Counter | undefined; baseline: Counter } {
    const gate = state.slowed
      ? { key: `an:gate:${orgId}:${Math.floor(now / SLOW_PERIOD_MS)}`, limit: 1, ttlMs: SLOW_PERIOD_MS * 2 }
      : undefined;
    return {
      gate,
      baseline: { key: minuteKey(orgId, Math.floor(now / MINUTE_MS)), limit: null, ttlMs: (BASELINE_MINUTES + 2) * MINUTE_MS },
    };
  }
}

function minuteKey(orgId: string, minute: number): string {
  return `an:min:${orgId}:${minute}`;
}
