import type { Config } from '../config/env.js';
import type { Caller } from '../domain/caller.js';
import type { ClientInfo } from '../domain/client.js';
import type { Clock } from '../domain/clock.js';
import { sha256 } from '../domain/ids.js';
import type { Organization, Plan } from '../domain/types.js';
import { ApiError } from '../errors/api-error.js';
import { AnomalyDetector, SLOW_PERIOD_MS } from './anomaly.js';
import type { LimiterBackend } from './backend.js';
import { ipBucket } from './client-ip.js';
import type { Counter } from './store.js';

/** Spec, Request rate limits: requests per second, per organization and per key. */
export const PLAN_REQUESTS_PER_SECOND: Readonly<Record<Plan, number>> = Object.freeze({
  free: 2,
  starter: 5,
  pro: 20,
  business_50k: 50,
  business_100k: 50,
  business_200k: 50,
});

/** `details.scope` of a 429 `rate_limited`. */
export type LimitScope = 'plan' | 'key' | 'ip' | 'flood' | 'anomaly' | 'recipient';

const SECOND_MS = 1000;
const DAY_MS = 86_400_000;

interface Limit extends Counter {
  scope: LimitScope;
  /** When the window of this counter ends (Retry-After is counted to it). */
  endsAt: number;
}

function fixedWindow(now: number, windowMs: number): { index: number; endsAt: number } {
  const index = Math.floor(now / windowMs);
  return { index, endsAt: (index + 1) * windowMs };
}

function windowLimit(scope: LimitScope, id: string, limit: number, windowMs: number, now: number): Limit {
  const w = fixedWindow(now, windowMs);
  // Two windows of TTL: a key is never dropped while its window can still be counted.
  return { scope, key: `rl:${scope}:${id}:${windowMs}:${w.index}`, limit, ttlMs: windowMs * 2, endsAt: w.endsAt };
}

/** Public-key requests per client address (IPv6 per /64), per the organization's settings. */
function ipLimit(org: Organization, client: Pick<ClientInfo, 'ip'>, now: number): Limit {
  const ip = org.security.ip_limit;
  return windowLimit('ip', `${org.id}:${ipBucket(client.ip)}`, ip.requests, ip.per_seconds * SECOND_MS, now);
}

const MESSAGES: Record<LimitScope, string> = {
  plan: "Too many requests for the organization's plan",
  key: 'Too many requests with this key',
  ip: 'Too many requests from this IP address',
  flood: 'Too many requests for this organization',
  anomaly: "Unusual spike of this organization's public-key requests: slowed to one request every 2 seconds",
  recipient: 'This recipient reached the daily maximum of emails to dynamic recipients',
};

export function rateLimited(scope: LimitScope, retryAfterSeconds: number, extra: Record<string, unknown> = {}): ApiError {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return new ApiError('rate_limited', {
    message: `${MESSAGES[scope]}; retry after ${seconds} s.`,
    details: { scope, retry_after: seconds, ...extra },
    headers: { 'retry-after': String(seconds) },
  });
}

/** The recipient counters a send used: refunded when the send then fails. */
export interface RecipientCharge {
  keys: string[];
}

/**
 * Every request rate limit of the spec, as fixed windows in a LimiterStore (memory or Redis),
 * on the injected Clock. Public keys fail closed when the store is unreachable (503), private
 * keys fail open.
 */
export class RateLimits {
  private readonly anomaly: AnomalyDetector;

  constructor(
    private readonly backend: LimiterBackend,
    private readonly clock: Clock,
    private readonly settings: Config['limits'],
  ) {
    this.anomaly = new AnomalyDetector(settings.anomaly);
  }

  /**
   * Send path step 2, public keys only: every public-key request of an organization counts
   * toward its flood guard, whatever happens to it next. Requests that fail before the template
   * lookup and CAPTCHA are limited by nothing else. The guard is at least
   * MAILROOM_FLOOD_GUARD_PER_SECOND (default 50) and at least twice the plan's rate, so that it
   * never bites before the plan limit.
   */
  async floodGuard(caller: Caller): Promise<void> {
    if (caller.key.type !== 'public') return;
    const { org } = caller;
    const limit = Math.max(this.settings.floodPerSecond, 2 * PLAN_REQUESTS_PER_SECOND[org.plan]);
    const counter = windowLimit('flood', org.id, limit, SECOND_MS, this.clock.now());
    await this.consume([counter], 'flood', false);
  }

  /**
   * One request toward the plan and key limits, and for public keys also toward the per-IP
   * limit and anomaly detection. The send path calls it once per request: for private keys
   * after the idempotency replay check (replays are free), for public keys after the template
   * lookup and the CAPTCHA check. The batch endpoint calls it once for the whole batch.
   */
  async countRequest(caller: Caller, client: Pick<ClientInfo, 'ip'>): Promise<void> {
    const now = this.clock.now();
    const { org, key } = caller;
    const perSecond = PLAN_REQUESTS_PER_SECOND[org.plan];
    const keyLimit = windowLimit('key', key.id, perSecond, SECOND_MS, now);
    const planLimit = windowLimit('plan', org.id, perSecond, SECOND_MS, now);
    if (key.type === 'private') {
      await this.consume([keyLimit, planLimit], 'plan', true);
      return;
    }
    const limits: Array<Limit | Counter> = [ipLimit(org, client, now)];
    let baseline: Counter | undefined;
    if (this.anomaly.enabled) {
      const state = await this.backend.call('anomaly', false, undefined, (store) => this.anomaly.observe(store, org.id, now));
      if (state !== undefined) {
        const counters = this.anomaly.counters(org.id, now, state);
        if (counters.gate !== undefined) {
          limits.push({
            ...counters.gate,
            scope: 'anomaly',
            endsAt: (Math.floor(now / SLOW_PERIOD_MS) + 1) * SLOW_PERIOD_MS,
          } satisfies Limit);
        }
        baseline = counters.baseline;
      }
    }
    limits.push(keyLimit, planLimit);
    if (baseline !== undefined) limits.push(baseline);
    await this.consume(limits, 'plan', false);
  }

  /**
   * Spec, Limits rule 2 for a public-key request that is not a send (an upload): it counts
   * toward the per-IP limit, which every public-key request does. Plan, key and anomaly limits
   * count sends only (rule 3: requests that passed the template lookup and CAPTCHA), so a page
   * that uploads three files and sends once spends one plan slot, and four of the IP's.
   */
  async countClientOnly(caller: Caller, client: Pick<ClientInfo, 'ip'>): Promise<void> {
    if (caller.key.type !== 'public') return;
    await this.consume([ipLimit(caller.org, client, this.clock.now())], 'plan', false);
  }

  /**
   * Spec, Limits: public-key sends to a dynamic-recipient template may reach one recipient at
   * most `recipient_daily_limit` times per UTC day. Counted in the limiter store (atomic, shared
   * through Redis) and refunded with `refund` when the send fails after this check.
   */
  async countRecipients(org: Organization, recipients: readonly string[]): Promise<RecipientCharge> {
    const now = this.clock.now();
    const day = Math.floor(now / DAY_MS);
    const endsAt = (day + 1) * DAY_MS;
    const limits: Limit[] = [...new Set(recipients.map((r) => r.toLowerCase()))].map((r) => ({
      scope: 'recipient',
      key: `rl:recipient:${org.id}:${day}:${sha256(r).slice(0, 32)}`,
      limit: org.security.recipient_daily_limit,
      ttlMs: endsAt - now + 3_600_000,
      endsAt,
    }));
    if (limits.length === 0) return { keys: [] };
    await this.consume(limits, 'recipient', false, { limit: org.security.recipient_daily_limit });
    return { keys: limits.map((l) => l.key) };
  }

  async refund(charge: RecipientCharge): Promise<void> {
    if (charge.keys.length === 0) return;
    // A refund that cannot reach the store leaves the count one too high until the day ends.
    await this.backend.call('recipient', true, undefined, (store) => store.release(charge.keys));
  }

  private async consume(
    counters: ReadonlyArray<Limit | Counter>,
    scope: string,
    failOpen: boolean,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    const refused = await this.backend.call(scope, failOpen, -1, (store) => store.consume(counters));
    if (refused < 0) return;
    const limit = counters[refused] as Limit;
    throw rateLimited(limit.scope, (limit.endsAt - this.clock.now()) / 1000, extra);
  }
}
