import { canonicalAddress } from '../domain/addresses.js';
import type { Clock } from '../domain/clock.js';
import { refusalSuppresses, refusedMailboxes } from '../domain/suppression-policy.js';
import { countApplied, type Recorded } from '../events/apply.js';
import { replayEarlyEvents } from '../events/early.js';
import type { Metrics } from '../observability/metrics.js';
import type { ClaimedMessage, RecipientOutcome, SettledState } from '../storage/queue-types.js';
import type { Store } from '../storage/store.js';
import { exemptFromSuppression } from '../testmode/simulator.js';
import { allRecipients, type RenderedEmail } from '../templates/render.js';
import { DEFAULT_RETRY, type RetryPolicy, retryAt as retryTime } from './retry.js';
import type { DeliveryError, Refusal } from './transport.js';

/**
 * Per-recipient delivery (issue 11 §3). A relay may accept some recipients of a message and
 * refuse others, for now (4xx) or for good (5xx). Each recipient then gets a state of its own:
 * the accepted ones are `sent` and never get the message again, the refused-for-now ones are
 * `deferred` and the message is retried for them alone (same Message-ID, same headers), the
 * refused-for-good ones are `bounced`. A message whose recipients all share one fate is
 * recorded as a whole, as before, and writes no per-recipient rows.
 */

/** States after which a recipient is not owed the message any more. */
const SETTLED: ReadonlySet<SettledState> = new Set<SettledState>(['sent', 'bounced', 'failed', 'suppressed']);

export interface Addressees {
  /** The email as it goes out: headers as accepted, minus recipients suppressed since. */
  email: RenderedEmail;
  /** The recipients this attempt is for (lower-cased): neither settled before nor suppressed. */
  owed: string[];
  /** Recipients still owed the message that are on the suppression list now: dropped. */
  suppressed: string[];
  /** `owed` as the message spells them (a local part may be case-sensitive); used after a partial outcome. */
  envelope: string[];
}

/**
 * Who an attempt goes to. Recipients settled by an earlier attempt keep their place in the
 * headers (the message is the same one) but leave the envelope; a recipient suppressed since
 * acceptance (a bounce or complaint arrived meanwhile) leaves both, as before.
 */
export function addressees(
  email: RenderedEmail,
  prior: ReadonlyMap<string, SettledState>,
  orgSuppressed: ReadonlySet<string>,
): Addressees {
  const unsettled = allRecipients(email).filter((r) => !SETTLED.has(prior.get(r) ?? 'deferred'));
  // Simulator addresses but suppressed@ are not held back by the rows their own events wrote (D4).
  const suppressed = unsettled.filter((r) => orgSuppressed.has(r) && !exemptFromSuppression(r));
  const gone = new Set(suppressed);
  const owed = unsettled.filter((r) => !gone.has(r));
  // Only a retry after a partial outcome names its envelope: the usual send spends nothing here.
  const spelled =
    prior.size === 0
      ? undefined
      : new Map([...email.bcc, ...email.cc, ...email.to].map((a) => [canonicalAddress(a.address), a.address]));
  const envelope = spelled === undefined ? owed : owed.map((r) => spelled.get(r) ?? r);
  if (suppressed.length === 0) return { email, owed, suppressed, envelope };
  const keep = (list: RenderedEmail['to']) => list.filter((a) => !gone.has(canonicalAddress(a.address)));
  return { email: { ...email, to: keep(email.to), cc: keep(email.cc), bcc: keep(email.bcc) }, owed, suppressed, envelope };
}

/** The message's To addresses, by canonicalAddress as allRecipients keys them. */
export function toAddresses(email: RenderedEmail): Set<string> {
  return new Set(email.to.map((a) => canonicalAddress(a.address)));
}

/**
 * Whether a refusal of every recipient (nodemailer's error with `refused`) can be recorded for
 * the message as a whole: all refused the same way. Otherwise each is settled on its own.
 */
export function uniformRefusal(err: DeliveryError): boolean {
  return err.refused.length === 0 || new Set(err.refused.map((r) => r.kind)).size === 1;
}

/**
 * What came of the attempt: the relay's answer (with the provider's id for the message when it
 * reported one: DeliveryReceipt.providerMessageId), its error, or nothing (nobody left to send to).
 */
export type AttemptResult =
  | { response: string; refused: readonly Refusal[]; providerMessageId?: string }
  | { error: DeliveryError }
  | undefined;

export interface PlanInput {
  owed: readonly string[];
  suppressed: readonly string[];
  prior: ReadonlyMap<string, SettledState>;
  /** The message's To addresses (lower-cased): a bounce of the whole message suppresses them. */
  to: ReadonlySet<string>;
  result: AttemptResult;
  /** The service the attempt went through (failover may pick another than the message's): on the `sent` event. */
  sentVia?: string;
  /** When recipients refused for now may be tried again; undefined: their retries ran out. */
  retryAt: number | undefined;
  attempts: number;
}

export interface Plan {
  outcome: RecipientOutcome;
  /** Hard bounces (the suppression policy's): the suppression list gets them once the outcome is recorded. */
  suppress: string[];
}

type Change = { state: SettledState; reason: string | null; hard?: boolean };

/** The attempt's effect on each recipient, the events naming them, and the message's next step. */
export function planOutcome(input: PlanInput): Plan {
  const { owed, prior, result } = input;
  const changes = new Map<string, Change>();
  for (const address of input.suppressed) changes.set(address, { state: 'suppressed', reason: 'on the suppression list' });
  let accepted: string[] = [];
  let response = '';
  let providerMessageId: string | undefined;
  let held: string | undefined;

  // Who is suppressed is the suppression policy's (src/domain/suppression-policy.ts).
  const attempted = { owed, to: input.to };
  // A relay may name an address otherwise spelled (nodemailer gives `zoë@` a U-label domain): key it as owed is.
  const refuse = (r: Refusal) =>
    changes.set(
      canonicalAddress(r.address),
      r.kind === 'temporary'
        ? { state: 'deferred', reason: r.reason }
        : { state: 'bounced', reason: r.reason, hard: refusalSuppresses(r, attempted) },
    );

  if (result !== undefined && 'error' in result) {
    const err = result.error;
    const reason = err.message.slice(0, 500);
    if (err.kind === 'service') {
      // The service is broken, not the recipients: they stay as they are until it is fixed.
      held = reason;
    } else if (err.refused.length > 0) {
      for (const r of err.refused) refuse(r);
    } else {
      const hardOnes = new Set(err.kind === 'mailbox' ? refusedMailboxes(err.recipients, attempted) : []);
      for (const address of owed) {
        changes.set(
          address,
          err.kind === 'temporary'
            ? { state: 'deferred', reason }
            : err.kind === 'mailbox'
              ? { state: 'bounced', reason, hard: hardOnes.has(address) }
              : { state: 'failed', reason },
        );
      }
    }
  } else if (result !== undefined) {
    response = result.response;
    providerMessageId = result.providerMessageId;
    for (const r of result.refused) refuse(r);
    accepted = owed.filter((r) => !changes.has(r));
    for (const address of accepted) changes.set(address, { state: 'sent', reason: null });
  }

  // Retries ran out for the recipients refused for now: they fail, each named.
  if (input.retryAt === undefined) {
    for (const [address, c] of changes) {
      if (c.state === 'deferred')
        changes.set(address, { state: 'failed', reason: `gave up after ${input.attempts} attempts: ${c.reason ?? ''}` });
    }
  }

  const all = new Map<string, SettledState>(prior);
  for (const [address, c] of changes) all.set(address, c.state);
  const states = [...all.values()];
  const deferred = [...changes].filter(([, c]) => c.state === 'deferred');
  const firstReason = [...changes.values()].find((c) => c.reason !== null && c.state !== 'suppressed')?.reason ?? null;

  let next: RecipientOutcome['next'];
  if (held !== undefined) next = { status: 'held_service_error', lastError: held };
  else if (deferred.length > 0 && input.retryAt !== undefined)
    next = { status: 'queued', nextAttemptAt: input.retryAt, lastError: deferred[0]?.[1].reason ?? '' };
  else if (states.includes('sent')) next = { status: 'sent', lastError: null };
  else if (states.includes('bounced')) next = { status: 'bounced', lastError: firstReason };
  else next = { status: 'failed', lastError: firstReason ?? 'no recipient is left to send to' };

  const retryAt = input.retryAt === undefined ? undefined : new Date(input.retryAt).toISOString();
  const named = (state: SettledState) => [...changes].filter(([, c]) => c.state === state);
  // The message's own event last, then the recipients still to come: the timeline's last
  // entry says what happens next, as it does for a message settled as a whole.
  const events: Array<RecipientOutcome['events'][number]> = [
    ...named('bounced').map(([recipient, c]) => ({
      type: 'bounced',
      detail: { recipient, reason: c.reason, hard: c.hard === true },
    })),
    ...named('failed').map(([recipient, c]) => ({ type: 'failed', detail: { recipient, reason: c.reason } })),
    ...(held !== undefined ? [{ type: 'held_service_error', detail: { reason: held } }] : []),
    ...(accepted.length > 0 ? [{ type: 'sent', detail: sentDetail(response, providerMessageId, input.sentVia, accepted) }] : []),
    ...(next.status === 'queued'
      ? deferred.map(([recipient, c]) => ({ type: 'deferred', detail: { recipient, reason: c.reason, retry_at: retryAt } }))
      : []),
  ];
  if (events.length === 0)
    events.push({
      type: next.status,
      detail: { reason: next.lastError ?? 'every recipient still owed the message is suppressed' },
    });

  return {
    outcome: {
      recipients: [...changes].map(([address, c]) => ({ address, state: c.state, reason: c.reason })),
      events,
      next,
      accepted: accepted.length > 0,
      ...(accepted.length > 0 && providerMessageId !== undefined ? { providerMessageId } : {}),
    },
    suppress: [...changes].filter(([, c]) => c.hard === true).map(([address]) => address),
  };
}

/**
 * The `sent` event's detail, the same whether the message was sent as a whole (attempt.ts) or
 * to some of its recipients (planOutcome): the relay's reply, the provider's id for this
 * hand-off when it reported one (each partial attempt has its own), the service that sent it
 * (failover may pick another than the message's) and, for a partial one, who was accepted.
 */
export function sentDetail(
  response: string,
  providerMessageId: string | undefined,
  serviceId: string | undefined,
  recipients?: readonly string[],
): Record<string, unknown> {
  return {
    response: response.slice(0, 500),
    ...(recipients !== undefined ? { recipients } : {}),
    ...(providerMessageId !== undefined ? { provider_message_id: providerMessageId } : {}),
    ...(serviceId !== undefined ? { service_id: serviceId } : {}),
  };
}

/** The longest wait a refused recipient asked for (Refusal.retryAfterMs), if any did. */
function askedWait(result: AttemptResult): number | undefined {
  if (result === undefined) return undefined;
  const refused = 'error' in result ? result.error.refused : result.refused;
  const waits = refused.flatMap((r) => (r.retryAfterMs !== undefined ? [r.retryAfterMs] : []));
  return waits.length > 0 ? Math.max(...waits) : undefined;
}

export interface SettleDeps {
  store: Store;
  clock: Clock;
  metrics: Metrics;
  logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  retry?: RetryPolicy;
  random?: () => number;
}

/**
 * Records an attempt whose recipients parted ways: each recipient's state, its events, the
 * suppression of hard bounces and the message's next step commit in one durable transaction,
 * awaited before the attempt is over, so a worker killed afterwards never sends to an accepted
 * recipient again. The retry schedule is the message's own: its attempts count for every
 * recipient still owed it. The caller has let go of the claim (no lease write under way).
 */
export async function settleApart(
  deps: SettleDeps,
  m: ClaimedMessage,
  input: Omit<PlanInput, 'retryAt' | 'attempts'>,
  log: Record<string, unknown>,
): Promise<void> {
  const { store, clock, metrics, logger } = deps;
  const now = clock.now();
  const retryAt = retryTime(deps.retry ?? DEFAULT_RETRY, m, now, askedWait(input.result), deps.random);
  const plan = planOutcome({ ...input, retryAt, attempts: m.attempts });
  const providerMessageId = plan.outcome.providerMessageId;
  let early: Recorded[] = [];
  const moved = await store.transaction(async (tx) => {
    if (providerMessageId !== undefined) await tx.providerEvents.lockProviderIds([{ orgId: m.org_id, providerMessageId }]);
    if (!(await tx.queue.settleRecipients(m.id, m.lease_until, now, plan.outcome))) return false;
    for (const address of plan.suppress) await tx.suppressions.add(m.org_id, address, 'hard_bounce', now, m.id);
    // Provider events that came before this settle (src/events/early.ts): applied to states
    // once the message has left for good; while a retry is still owed, only taken in.
    early = await replayEarlyEvents(tx, m.id, now);
    return true;
  });
  countApplied(metrics, early);
  const status = plan.outcome.next.status;
  if (moved) {
    if (status === 'queued') metrics.deferred.inc({ service: m.service_id });
    else if (status === 'sent' || status === 'bounced' || status === 'failed') metrics[status].inc({ service: m.service_id });
  }
  const recipients: Record<string, number> = {};
  for (const r of plan.outcome.recipients) recipients[r.state] = (recipients[r.state] ?? 0) + 1;
  logger[status === 'sent' || status === 'queued' ? 'info' : 'warn'](
    { ...log, outcome: moved ? status : 'lease_lost', recipients },
    'delivery attempt',
  );
}
