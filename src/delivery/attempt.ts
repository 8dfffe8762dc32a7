import type { BlobStore } from '../blobs/blob-store.js';
import type { Service } from '../domain/types.js';
import type { Metrics } from '../observability/metrics.js';
import type { ClaimedMessage } from '../storage/queue-types.js';
import type { RenderedEmail } from '../templates/render.js';
import type { Breakers } from './breaker.js';
import { pickRoute, UNAVAILABLE, type Route } from './failover.js';
import type { Outcomes } from './outcomes.js';
import type { Prober } from './probe.js';
import { throttlePause, type Pacer } from './pacing.js';
import { sentDetail, uniformRefusal, type AttemptResult } from './recipients.js';
import { loadAttachments, type StoredAttachment } from './stored.js';
import { RedisUnavailable } from '../net/redis-circuit.js';
import { DeliveryError, type DeliveryReceipt, type OutgoingEmail, type Transport } from './transport.js';

/**
 * One attempt of one message through its service chain (failover.ts): each try asks the
 * service's breaker first, and the message is sent by exactly one service per attempt. The
 * next service is tried within the same attempt only after a service error on an opted-in
 * chain (`failover_on_service_error`), which sent nothing; a transient failure is deferred as
 * before (its retry will find the breaker open once enough of them happened), and a bounce or a
 * refusal is final whatever the chain.
 */

export interface AttemptDeps {
  breakers: Breakers;
  /** Synthetic probes of half-open breakers (probe.ts); absent: messages are the probes. */
  prober?: Prober;
  pacer: Pacer;
  outcomes: Outcomes;
  metrics: Metrics;
  logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  blobs: BlobStore | undefined;
  clock: { now(): number };
  transportFor(service: Service): Transport | undefined;
  /** Renews the message's claim after a wait; false when it was lost meanwhile. */
  renew(m: ClaimedMessage): Promise<boolean>;
}

export interface AttemptInput {
  m: ClaimedMessage;
  log: Record<string, unknown>;
  chain: readonly Service[];
  onServiceError: boolean;
  email: RenderedEmail;
  attachments: readonly StoredAttachment[];
  /** A retry for the recipients still owed it (some were settled apart): the envelope. */
  envelopeTo: string[] | undefined;
  /** Recipients settled apart: every outcome is recorded per recipient. */
  apart: boolean;
  /** A submitted message's bytes (SMTP submission): sent as they are. */
  mime?: Buffer;
  settle(result: AttemptResult, sentVia?: string): Promise<void>;
}

const asDeliveryError = (error: unknown): DeliveryError =>
  error instanceof DeliveryError ? error : new DeliveryError('temporary', error instanceof Error ? error.message : String(error));

export async function attemptThroughChain(deps: AttemptDeps, input: AttemptInput): Promise<void> {
  const { m, log, chain } = input;
  // While Redis is treated as down (RedisUnavailable, thrown untried) the circuit has logged the
  // outage once (src/net/redis-client.ts): a line per message would repeat it at every send.
  const breakerError = (err: unknown) => {
    if (!(err instanceof RedisUnavailable))
      deps.logger.warn({ ...log, err }, 'circuit breaker store failed; sending as if closed');
  };
  /** Breaker bookkeeping never decides an outcome: its store failing is logged, no more. */
  const note = (p: Promise<void>) => p.catch(breakerError);
  let from = 0;
  let held: DeliveryError | undefined;
  let attachments: OutgoingEmail['attachments'] | undefined;
  for (;;) {
    const route = await pickRoute(deps.breakers, chain, from, {
      messageId: m.id,
      now: () => deps.clock.now(),
      onBreakerError: breakerError,
      ...(deps.prober !== undefined ? { prober: deps.prober } : {}),
    });
    if (!('admission' in route)) {
      if (held !== undefined && route.retryAt === undefined) return failWhole(deps, input, held);
      const at = route.retryAt ?? deps.clock.now();
      await deps.outcomes.wait(m, at, UNAVAILABLE);
      deps.logger.warn({ ...log, outcome: 'waiting', retry_at: new Date(at).toISOString() }, 'delivery attempt');
      return;
    }
    const { service: via, key, admission } = route;
    const viaLog = via.id === m.service_id ? log : { ...log, via: via.id };
    const transport = deps.transportFor(via);
    if (transport === undefined) {
      // A failover service of a provider this version does not know: skipped.
      await note(deps.breakers.abandon(key, admission));
      from = route.index + 1;
      continue;
    }
    let receipt: DeliveryReceipt;
    let started: number;
    try {
      // A pacer that fails (Redis down) or a missing attachment fails this attempt as any error
      // of its kind would; neither is the service's doing, so the breaker hears nothing.
      if (!(await pace(deps, m, via, key))) {
        await note(deps.breakers.abandon(key, admission));
        deps.logger.info(
          { ...viaLog, outcome: 'lease_lost' },
          'not sent: the claim was lost while the message waited for its pacing slot',
        );
        return;
      }
      attachments ??= await loadAttachments(deps.blobs, input.attachments);
    } catch (error) {
      await note(deps.breakers.abandon(key, admission));
      return failWhole(deps, { ...input, log: viaLog }, asDeliveryError(error));
    }
    try {
      started = performance.now();
      receipt = await transport.send({
        messageId: m.id,
        headerMessageId: m.header_message_id,
        email: input.email,
        attachments,
        ...(input.envelopeTo !== undefined ? { envelopeTo: input.envelopeTo } : {}),
        ...(input.mime !== undefined ? { mime: input.mime } : {}),
      });
    } catch (error) {
      const err = asDeliveryError(error);
      await note(report(deps.breakers, route, err));
      if (err.options.throttled === true) {
        await note(deps.pacer.slowDown?.(key, deps.clock.now() + throttlePause(err.options.retryAfterMs)) ?? Promise.resolve());
      }
      if (err.kind === 'service' && input.onServiceError && route.index + 1 < chain.length) {
        deps.logger.warn(
          { ...viaLog, outcome: 'failover', reason: err.message.slice(0, 300) },
          'service error: trying the next service of the chain',
        );
        held ??= err;
        from = route.index + 1;
        continue;
      }
      return failWhole(deps, { ...input, log: viaLog }, err);
    }
    deps.metrics.sendSeconds.observe({ service: via.id }, (performance.now() - started) / 1000);
    await note(deps.breakers.succeeded(key, admission));
    if (!input.apart && (receipt.refused ?? []).length === 0) {
      deps.outcomes.sent(m, sentDetail(receipt.response, receipt.providerMessageId, via.id), receipt.providerMessageId);
      deps.metrics.sent.inc({ service: via.id });
      deps.logger.info({ ...viaLog, outcome: 'sent', ms: Math.round(performance.now() - started) }, 'delivery attempt');
      return;
    }
    // Outside the send's try: should recording fail, the relay's answer must not be recorded as
    // a failed send (the accepted recipients would be marked as owed it); the lease expires and
    // the reaper requeues the message, as for any outcome write that fails (at-least-once).
    await input.settle(
      {
        response: receipt.response,
        refused: receipt.refused ?? [],
        ...(receipt.providerMessageId !== undefined ? { providerMessageId: receipt.providerMessageId } : {}),
      },
      via.id,
    );
    return;
  }
}

/**
 * One attempt of a test-mode or simulator message (issue 27 §3.3): straight to the sandbox
 * (transports/sandbox.ts), which contacts nobody, so there is no breaker, pacing or failover to
 * ask. The outcome is written as any message's is (Outcomes), so the timeline, the recipients'
 * states and the webhooks are the same as a live send's; the `sent` event says which sandbox
 * (`capture`: the test inbox; `simulator`: a live key's simulator addresses).
 */
export async function attemptDirect(
  deps: Pick<AttemptDeps, 'outcomes' | 'metrics' | 'logger' | 'blobs'>,
  input: Omit<AttemptInput, 'chain' | 'onServiceError'>,
  sandbox: Transport,
  via: 'capture' | 'simulator',
): Promise<void> {
  const { m, log } = input;
  let receipt: DeliveryReceipt;
  try {
    receipt = await sandbox.send({
      messageId: m.id,
      headerMessageId: m.header_message_id,
      email: input.email,
      attachments: await loadAttachments(deps.blobs, input.attachments),
      ...(input.envelopeTo !== undefined ? { envelopeTo: input.envelopeTo } : {}),
      ...(input.mime !== undefined ? { mime: input.mime } : {}),
      attempt: m.attempts,
      createdAt: m.created_at,
      mode: m.mode,
      orgId: m.org_id,
    });
  } catch (error) {
    return failWhole(deps, { ...input, chain: [], onServiceError: false }, asDeliveryError(error));
  }
  if (!input.apart && (receipt.refused ?? []).length === 0) {
    deps.outcomes.sent(m, { ...sentDetail(receipt.response, undefined, m.service_id), sandbox: via });
    deps.metrics.sent.inc({ service: m.service_id });
    deps.logger.info({ ...log, outcome: 'sent', sandbox: via }, 'delivery attempt');
    return;
  }
  await input.settle({ response: receipt.response, refused: receipt.refused ?? [] }, m.service_id);
}

/**
 * What the breaker hears of a failed send: a transient failure of the whole message counts;
 * anything else (a bounce, a refusal, a service error, recipients refused one by one, and
 * throttling, which the pacer answers) is the service answering, which proves it reachable.
 */
function report(breakers: Breakers, route: Route, err: DeliveryError): Promise<void> {
  return err.kind === 'temporary' && err.refused.length === 0 && err.options.throttled !== true
    ? breakers.failed(route.key, route.admission, err.message)
    : breakers.succeeded(route.key, route.admission);
}

async function failWhole(deps: Pick<AttemptDeps, 'outcomes' | 'logger'>, input: AttemptInput, err: DeliveryError): Promise<void> {
  if (input.apart || !uniformRefusal(err)) {
    await input.settle({ error: err });
    return;
  }
  await deps.outcomes.failed(input.m, err, input.email);
  deps.logger.warn({ ...input.log, outcome: err.kind, reason: err.message.slice(0, 300) }, 'delivery attempt');
}

/**
 * Waits for the service's pacing slot (its rate) or the end of its slow-down (a throttling
 * answer). Pacing may have waited: the claim is renewed, and false means it was lost meanwhile
 * (a stop gave it back), so it must not leave.
 */
async function pace(deps: AttemptDeps, m: ClaimedMessage, via: Service, key: string): Promise<boolean> {
  let waited: boolean;
  if (via.max_per_second !== null) {
    await deps.pacer.acquire(key, via.max_per_second);
    waited = true;
  } else {
    waited = (await deps.pacer.waitSlowDown?.(key)) ?? false;
  }
  return !waited || deps.renew(m);
}
