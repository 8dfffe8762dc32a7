import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics of one process. Each process keeps its own registry (tests build many
 * apps in one process); `queue` gauges read the database when scraped.
 */
export interface Metrics {
  registry: Registry;
  accepted: Counter<'service'>;
  sent: Counter<'service'>;
  deferred: Counter<'service'>;
  failed: Counter<'service'>;
  bounced: Counter<'service'>;
  sendSeconds: Histogram<'service'>;
  rateLimitBackendErrors: Counter<'scope'>;
  /** Events after hand-off (src/events/record.ts), one per recipient event recorded. */
  eventsDelivered: Counter<'source'>;
  eventsBounced: Counter<'source' | 'type'>;
  eventsComplained: Counter<'source'>;
  /** Every provider event by what became of it: recorded, duplicate, unmatched, rejected. */
  providerEvents: Counter<'source' | 'outcome'>;
  /** Outbound webhook deliveries by outcome: succeeded, retried (an attempt failed, another is due), failed, disabled (410). */
  webhookDeliveries: Counter<'outcome'>;
  /** One outbound webhook attempt, answered or not. */
  webhookAttemptSeconds: Histogram;
  /**
   * The process's circuit breakers (src/delivery/breaker.ts), as `mailroom_service_breaker_state`
   * reads them when scraped and the admin API's service resource shows them: set where they are
   * built (buildServices, else the delivery worker); unset, no series and no `breaker` field.
   */
  breakers: BreakerReadout;
  /**
   * Whether this process uses its Redis connection now (`mailroom_redis_available`, 1 or 0):
   * set where the connection is built (buildServices); unset (no MAILROOM_REDIS_URL), no series.
   */
  redis: { available?: () => boolean };
}

export type BreakerStateName = 'closed' | 'half_open' | 'open';

export interface BreakerReadout {
  /** Every breaker known, keyed `<org>/<service>`. */
  read?: () => Promise<Array<{ key: string; state: BreakerStateName }>>;
  /** One service's breaker. */
  view?: (
    key: string,
  ) => Promise<{ state: BreakerStateName; openedAt?: number; consecutiveFailures: number; lastError?: string }>;
}

/** mailroom_service_breaker_state's values. */
const BREAKER_VALUES = { closed: 0, half_open: 1, open: 2 } as const;

/** Pending webhook deliveries of one endpoint, read when /metrics is scraped. */
export interface WebhookBacklog {
  org_id: string;
  endpoint_id: string;
  backlog: number;
  oldestPendingAgeMs: number;
}

/** Counts provider events; the intake calls it with `rejected` for a request that failed verification. */
export function countProviderEvents(
  metrics: Pick<Metrics, 'providerEvents'>,
  source: string,
  outcome: 'recorded' | 'duplicate' | 'unmatched' | 'rejected',
  n = 1,
): void {
  if (n > 0) metrics.providerEvents.inc({ source, outcome }, n);
}

export function createMetrics(
  queueDepth?: () => Promise<{ queued: number; due: number; oldestDueAgeMs: number }>,
  webhookBacklog?: () => Promise<WebhookBacklog[]>,
): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'mailroom_process_' });
  const counter = (name: string, help: string) =>
    new Counter({ name, help, labelNames: ['service'] as const, registers: [registry] });
  const metrics: Metrics = {
    registry,
    accepted: counter('mailroom_messages_accepted_total', 'Messages accepted by a send call'),
    sent: counter('mailroom_messages_sent_total', 'Messages accepted by the outbound service'),
    deferred: counter('mailroom_messages_deferred_total', 'Attempts that failed temporarily and will be retried'),
    failed: counter('mailroom_messages_failed_total', 'Messages that ended failed'),
    bounced: counter('mailroom_messages_bounced_total', 'Messages that ended bounced'),
    sendSeconds: new Histogram({
      name: 'mailroom_send_duration_seconds',
      help: 'Time to hand one message to the outbound service',
      labelNames: ['service'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    rateLimitBackendErrors: new Counter({
      name: 'mailroom_rate_limit_backend_errors_total',
      help: 'Rate-limit checks that could not reach their store (public keys fail closed, private keys open)',
      labelNames: ['scope'] as const,
      registers: [registry],
    }),
    eventsDelivered: new Counter({
      name: 'mailroom_events_delivered_total',
      help: 'Deliveries reported after hand-off',
      labelNames: ['source'] as const,
      registers: [registry],
    }),
    eventsBounced: new Counter({
      name: 'mailroom_events_bounced_total',
      help: 'Bounces reported after hand-off, by type (hard, soft)',
      labelNames: ['source', 'type'] as const,
      registers: [registry],
    }),
    eventsComplained: new Counter({
      name: 'mailroom_events_complained_total',
      help: 'Complaints reported after hand-off',
      labelNames: ['source'] as const,
      registers: [registry],
    }),
    providerEvents: new Counter({
      name: 'mailroom_provider_events_total',
      help: 'Provider events by source and outcome (recorded, duplicate, unmatched, rejected)',
      labelNames: ['source', 'outcome'] as const,
      registers: [registry],
    }),
    webhookDeliveries: new Counter({
      name: 'mailroom_webhook_deliveries_total',
      help: 'Outbound webhook attempts by outcome (succeeded, retried, failed: schedule exhausted, disabled: 410 Gone)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    webhookAttemptSeconds: new Histogram({
      name: 'mailroom_webhook_attempt_seconds',
      help: 'Duration of one outbound webhook attempt (up to its timeout)',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
      registers: [registry],
    }),
    breakers: {},
    redis: {},
  };
  new Gauge({
    name: 'mailroom_redis_available',
    help:
      'Redis answers (1), or is treated as down (0): not asked, rate limits fail ' +
      'open for private keys and closed for public ones, until a background probe answers',
    registers: [registry],
    collect() {
      this.reset();
      const available = metrics.redis.available;
      if (available !== undefined) this.set(available() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'mailroom_service_breaker_state',
    help:
      'Circuit breaker of each outbound service: 0 closed, 1 half-open ' +
      '(one probe message may go), 2 open (its messages fail over or wait)',
    labelNames: ['org', 'service'] as const,
    registers: [registry],
    async collect() {
      const rows = (await metrics.breakers.read?.()) ?? [];
      this.reset();
      for (const r of rows) {
        const slash = r.key.indexOf('/');
        this.set({ org: r.key.slice(0, slash), service: r.key.slice(slash + 1) }, BREAKER_VALUES[r.state]);
      }
    },
  });
  if (webhookBacklog !== undefined) {
    let last: Promise<WebhookBacklog[]> | undefined;
    // One database read serves both gauges of a scrape; reset first so a drained endpoint's series goes.
    const read = () =>
      (last ??= webhookBacklog().finally(() =>
        setImmediate(() => {
          last = undefined;
        }),
      ));
    new Gauge({
      name: 'mailroom_webhook_backlog',
      help: 'Pending outbound webhook deliveries per endpoint',
      labelNames: ['org', 'endpoint'] as const,
      registers: [registry],
      async collect() {
        const rows = await read();
        this.reset();
        for (const r of rows) this.set({ org: r.org_id, endpoint: r.endpoint_id }, r.backlog);
      },
    });
    new Gauge({
      name: 'mailroom_webhook_oldest_pending_seconds',
      help: 'Age of the oldest pending outbound webhook delivery per endpoint',
      labelNames: ['org', 'endpoint'] as const,
      registers: [registry],
      async collect() {
        const rows = await read();
        this.reset();
        for (const r of rows) this.set({ org: r.org_id, endpoint: r.endpoint_id }, r.oldestPendingAgeMs / 1000);
      },
    });
  }
  if (queueDepth !== undefined) {
    let last: Promise<{ queued: number; due: number; oldestDueAgeMs: number }> | undefined;
    // One database read serves all three gauges of a scrape.
    const read = () =>
      (last ??= queueDepth().finally(() =>
        setImmediate(() => {
          last = undefined;
        }),
      ));
    new Gauge({
      name: 'mailroom_queue_depth',
      help: 'Messages queued (due or waiting for a retry)',
      registers: [registry],
      async collect() {
        this.set((await read()).queued);
      },
    });
    new Gauge({
      name: 'mailroom_queue_due',
      help: 'Queued messages whose time has come',
      registers: [registry],
      async collect() {
        this.set((await read()).due);
      },
    });
    new Gauge({
      name: 'mailroom_queue_oldest_due_age_seconds',
      help: 'Age of the oldest due message',
      registers: [registry],
      async collect() {
        this.set((await read()).oldestDueAgeMs / 1000);
      },
    });
  }
  return metrics;
}
