import { ApiError } from '../errors/api-error.js';
import type { Store } from '../storage/store.js';
import { REPLAY_MAX_RANGE_MS, ReplayRangeTooLong } from '../storage/webhook-deliveries.js';
import type { FieldProblem } from './put-patch.js';

/**
 * The webhook delivery log and replays as the admin API (routes/webhook-deliveries.ts) and the
 * CLI (src/cli/webhook-commands.ts) share them: the not-found and in-flight errors, the range
 * rules, and what a replay to a disabled endpoint answers.
 */

export function deliveryNotFound(orgId: string, deliveryId: string, endpointId?: string): ApiError {
  const of = endpointId === undefined ? '' : ` for endpoint "${endpointId}"`;
  return new ApiError('not_found', {
    message: `Webhook delivery "${deliveryId}"${of} does not exist in organization "${orgId}".`,
  });
}

/** An ISO 8601 date-time that names a real instant, as milliseconds; undefined for anything else. */
export function instantOf(value: string | undefined): number | undefined {
  const ms = value === undefined ? NaN : Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

/** The longest range one replay takes, in days (the storage's REPLAY_MAX_RANGE_MS). */
export const REPLAY_MAX_RANGE_DAYS = Math.round(REPLAY_MAX_RANGE_MS / 86_400_000);

/** What is wrong with a replay range, named by field (`until`, whose rule is relative to `since`); null when fine. */
export function replayRangeProblem(since: number, until: number): FieldProblem | null {
  if (until <= since) return { field: 'until', message: 'must be after since' };
  if (until - since > REPLAY_MAX_RANGE_MS)
    return { field: 'until', message: `must be at most ${REPLAY_MAX_RANGE_DAYS} days after since` };
  return null;
}

/** The sentence for a replay whose endpoint is disabled: queued, but nothing goes out until it is enabled. */
export const waitsForEnable = (endpointId: string): string =>
  `Endpoint "${endpointId}" is disabled: the replay is queued and waits until the endpoint is enabled again.`;

/**
 * Queues one delivery again (its `webhook-id` and body unchanged). 404 when the organization
 * (or, given `endpointId`, that endpoint) has no such delivery; 409 `conflict` while it is being
 * sent (that attempt is left to finish and nothing changes) and for a `webhook.test` delivery.
 */
export async function replayDelivery(
  store: Store,
  orgId: string,
  deliveryId: string,
  endpointId?: string,
): Promise<{ endpointId: string; endpointEnabled: boolean }> {
  const r = await store.webhookDeliveries.replayOne(orgId, deliveryId, store.clock.now(), endpointId);
  if (r.outcome === 'not_found') throw deliveryNotFound(orgId, deliveryId, endpointId);
  if (r.outcome === 'test_event') {
    throw new ApiError('conflict', {
      message:
        `Webhook delivery "${deliveryId}" is a webhook.test event: those are sent ` +
        `once and not replayed. Send a new test event (POST …/webhooks/{id}/test).`,
    });
  }
  if (r.outcome === 'in_flight') {
    throw new ApiError('conflict', {
      message:
        `Webhook delivery "${deliveryId}" is being sent right now: ` +
        `it was left to finish. Replay it after this attempt if needed.`,
    });
  }
  return { endpointId: r.endpointId, endpointEnabled: r.endpointEnabled };
}

/**
 * Queues every event of [since, until) again for an endpoint (only the failed deliveries with
 * `onlyFailed`); the caller has checked the range (replayRangeProblem). Returns how many were
 * queued, or the range problem the storage found.
 */
export async function replayDeliveries(
  store: Store,
  orgId: string,
  endpointId: string,
  range: { since: number; until: number; onlyFailed: boolean },
): Promise<number | FieldProblem> {
  try {
    return await store.webhookDeliveries.replayRange(orgId, endpointId, range, store.clock.now());
  } catch (e) {
    if (e instanceof ReplayRangeTooLong)
      return { field: 'until', message: `must be at most ${REPLAY_MAX_RANGE_DAYS} days after since` };
    throw e;
  }
}
