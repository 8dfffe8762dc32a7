import type { Clock } from '../domain/clock.js';
import { ClaimPause } from '../domain/claim-pause.js';
import type { Metrics } from '../observability/metrics.js';
import { requestHeaders } from './custom-headers.js';
import { messageEventPayload, webhookIdOf } from './payload.js';
import type { AttemptRecord, ClaimedDelivery, WebhookStore } from './ports.js';
import { nextAttemptAt } from './schedule.js';
import { webhookHeaders } from './signing.js';
import type { PostResult, WebhookHttp, WebhookSettings } from './types.js';
import type { Wakeup } from './wakeup.js';

export interface DispatcherLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface DispatcherDeps {
  store: WebhookStore;
  clock: Clock;
  http: WebhookHttp;
  settings: WebhookSettings;
  metrics: Pick<Metrics, 'webhookDeliveries' | 'webhookAttemptSeconds'>;
  logger: DispatcherLogger;
  /** The process's wake-ups (event notifier, accepted sends); absent: polling only. */
  wakeup?: Wakeup;
  random?: () => number;
  /** Sleep when nothing is due (500 ms). */
  pollMs?: number;
}

/**
 * A claim outlives the attempt's own deadline by this much: recording the outcome takes a few ms,
 * so 10 s of margin means a live dispatcher never loses a lease, and a killed one's deliveries
 * are claimed again 10 s after their attempt could at most have ended (25 s by default).
 */
export const LEASE_MARGIN_MS = 10_000;

/** `Promise.race` with a timer that is cleared. */
function within(p: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise((r) => {
      timer = setTimeout(r, ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const endpointKey = (d: { org_id: string; endpoint_id: string }) => `${d.org_id}\u0000${d.endpoint_id}`;

/**
 * Outbound webhooks' dispatcher (issue 13): claims due deliveries (a lease; SKIP LOCKED on
 * PostgreSQL, so any number of processes share the work), posts each signed, and records what
 * came of it. Pacing, in this process: at most `endpointConcurrency` attempts per endpoint and
 * `maxInFlight` in all; endpoints at their limit are left out of the next claim, so one that
 * hangs until the timeout holds its own slots and nobody else's.
 */
export class WebhookDispatcher {
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly inFlight = new Map<number, { lease: number; done: Promise<void> }>();
  private readonly perEndpoint = new Map<string, number>();
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private nudged = false;
  private unlisten: (() => void) | undefined;

  /** While the database is unavailable: claims back off, one log line (as the delivery worker's). */
  private readonly pause: ClaimPause;

  constructor(private readonly deps: DispatcherDeps) {
    this.pollMs = deps.pollMs ?? 500;
    this.pause = new ClaimPause(deps.logger, this.pollMs);
    this.leaseMs = deps.settings.attemptTimeoutMs + LEASE_MARGIN_MS;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.unlisten = this.deps.wakeup?.listen(() => this.nudge());
    this.loop = this.run();
  }

  /** Events were just written in this process: look for due deliveries now. */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  /**
   * No new claims; attempts under way get `graceMs` to finish and be recorded, then what is
   * still out is given back (its outcome, should it come, no longer applies: the delivery is
   * sent again, with the same webhook-id).
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.running = false;
    this.unlisten?.();
    this.wake?.();
    await this.loop;
    await within(Promise.all([...this.inFlight.values()].map((f) => f.done)), graceMs);
    const left = [...this.inFlight.entries()].map(([id, f]) => ({ id, lease: f.lease }));
    if (left.length > 0) await this.release(left).catch(() => undefined);
  }

  /** Claims what this process has room for and starts those attempts; how many it started. */
  async fill(): Promise<number> {
    const { settings, store, clock } = this.deps;
    const free = settings.maxInFlight - this.inFlight.size;
    if (free <= 0) return 0;
    const full = [...this.perEndpoint.entries()]
      .filter(([, n]) => n >= settings.endpointConcurrency)
      .map(([k]) => {
        const [org_id = '', endpoint_id = ''] = k.split('\u0000');
        return { org_id, endpoint_id };
      });
    const now = clock.now();
    // A claim lost to a power cut only means the deliveries are claimed again: no flush needed.
    const claimed = await store.transaction(
      (tx) => tx.webhookDeliveries.claim(now, free, this.leaseMs, full, settings.endpointConcurrency),
      { durable: false },
    );
    const extra: Array<{ id: number; lease: number }> = [];
    let started = 0;
    for (const d of claimed) {
      const key = endpointKey(d);
      const n = this.perEndpoint.get(key) ?? 0;
      // An endpoint partly busy here may have come back with more than its free slots.
      if (n >= settings.endpointConcurrency) {
        extra.push({ id: d.id, lease: d.lease_until });
        continue;
      }
      this.perEndpoint.set(key, n + 1);
      const done = this.attempt(d).finally(() => {
        this.inFlight.delete(d.id);
        const left = (this.perEndpoint.get(key) ?? 1) - 1;
        if (left <= 0) this.perEndpoint.delete(key);
        else this.perEndpoint.set(key, left);
        this.wake?.();
      });
      this.inFlight.set(d.id, { lease: d.lease_until, done });
      started += 1;
    }
    if (extra.length > 0) await this.release(extra);
    return started;
  }

  /** Gives deliveries back, due now; like a claim, nothing to flush. */
  private release(items: ReadonlyArray<{ id: number; lease: number }>): Promise<void> {
    const now = this.deps.clock.now();
    return this.deps.store.transaction((tx) => tx.webhookDeliveries.release(items, now), { durable: false });
  }

  /** Resolves when every attempt started so far is recorded (tests). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight.values()].map((f) => f.done));
  }

  private async run(): Promise<void> {
    while (this.running) {
      let started = 0;
      let pauseMs: number | undefined;
      this.nudged = false;
      try {
        started = await this.fill();
        this.pause.succeeded();
      } catch (err) {
        pauseMs = this.pause.failed(err);
        if (pauseMs === undefined) this.deps.logger.error({ err }, 'webhook claim failed');
      }
      if (!this.running) break;
      if (pauseMs === undefined && (started > 0 || this.nudged)) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pauseMs ?? this.pollMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  private body(d: ClaimedDelivery): string | undefined {
    if (d.payload !== null) return d.payload;
    if (d.event === null || d.message === null || d.message_id === null || d.sequence === null) return undefined;
    return messageEventPayload({
      eventType: d.event_type,
      at: d.event.at,
      detail: d.event.detail,
      messageId: d.message_id,
      orgId: d.message.org_id,
      templateId: d.message.template_id,
      serviceId: d.message.service_id,
      messageStatus: d.message_status ?? '',
      sequence: d.sequence,
      mode: d.message.mode,
      simulated: d.message.simulated,
    });
  }

  /** One attempt, start to record; never throws (a failure to record leaves the lease to expire). */
  private async attempt(d: ClaimedDelivery): Promise<void> {
    const { clock, http, settings, metrics, logger, store } = this.deps;
    const at = clock.now();
    const payload = this.body(d);
    const headers =
      payload === undefined
        ? undefined
        : requestHeaders(d.headers, webhookHeaders(d.secrets, webhookIdOf(d), Math.floor(at / 1000), payload));
    const result: PostResult =
      payload === undefined || headers === undefined
        ? { status: null, durationMs: 0, body: null, error: 'the event or its message is no longer stored' }
        : await http.post(d.url, headers.sent, payload);
    const now = clock.now();
    metrics.webhookAttemptSeconds.observe(result.durationMs / 1000);
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    const retryAt =
      ok || gone || payload === undefined
        ? undefined
        : nextAttemptAt(settings.retryScheduleSeconds, d.attempts + 1, now, this.deps.random);
    const next: AttemptRecord['next'] = ok
      ? { state: 'succeeded' }
      : retryAt === undefined
        ? { state: 'failed' }
        : { state: 'pending', nextAttemptAt: retryAt };
    try {
      const recorded = await store.transaction(
        (tx) =>
          tx.webhookDeliveries.recordAttempt({
            id: d.id,
            lease: d.lease_until,
            at,
            now,
            status: result.status,
            durationMs: result.durationMs,
            body: result.body,
            error: result.error ?? (ok ? null : `HTTP ${result.status ?? 'error'}`),
            payload: payload ?? null,
            requestHeaders: headers?.logged ?? null,
            next,
            ...(d.event_type === 'webhook.test'
              ? {}
              : { endpoint: { url: d.url, gone, disableAfterMs: settings.disableAfterMs } }),
          }),
        { durable: false },
      );
      if (!recorded.recorded) return;
      metrics.webhookDeliveries.inc({
        outcome: gone ? 'disabled' : next.state === 'succeeded' ? 'succeeded' : next.state === 'pending' ? 'retried' : 'failed',
      });
      if (recorded.disabled !== null) {
        logger.warn({ org: d.org_id, endpoint: d.endpoint_id, reason: recorded.disabled }, 'webhook endpoint disabled');
      }
    } catch (err) {
      logger.error({ err, delivery: d.id }, 'webhook attempt could not be recorded');
    }
  }
}
