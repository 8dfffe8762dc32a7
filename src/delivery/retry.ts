/**
 * Capped exponential backoff with jitter: 30 s, 1 min, 2 min, … up to 1 h between attempts,
 * each ±20%, so messages deferred together do not retry in lockstep. A message gives up after
 * 10 attempts or 24 hours in the queue, whichever comes first; by then a relay that kept
 * answering 4xx is not going to deliver it, and the sender deserves a visible `failed`.
 */
export interface RetryPolicy {
  baseMs: number;
  factor: number;
  maxDelayMs: number;
  jitter: number;
  maxAttempts: number;
  maxAgeMs: number;
}

export const DEFAULT_RETRY: Readonly<RetryPolicy> = Object.freeze({
  baseMs: 30_000,
  factor: 2,
  maxDelayMs: 60 * 60_000,
  jitter: 0.2,
  maxAttempts: 10,
  maxAgeMs: 24 * 60 * 60_000,
});

/** Which limit forbids a further attempt at `at` after `attempts` of them, if any. */
function exhausted(policy: RetryPolicy, attempts: number, createdAt: number, at: number): 'attempts' | 'age' | undefined {
  if (attempts >= policy.maxAttempts) return 'attempts';
  return at - createdAt > policy.maxAgeMs ? 'age' : undefined;
}

/** When to try again after attempt number `attempts` failed, or undefined to give up. */
export function nextAttemptAt(
  policy: RetryPolicy,
  attempts: number,
  createdAt: number,
  now: number,
  random: () => number = Math.random,
): number | undefined {
  if (attempts >= policy.maxAttempts) return undefined;
  const delay = Math.min(policy.maxDelayMs, policy.baseMs * policy.factor ** Math.max(0, attempts - 1));
  const at = now + Math.round(delay * (1 + policy.jitter * (2 * random() - 1)));
  return exhausted(policy, attempts, createdAt, at) === undefined ? at : undefined;
}

const LEASE_LOST = 'its last attempt never finished (the lease expired: the worker stopped or lost the message mid-attempt)';

/**
 * For the reaper: why a message whose lease expired may not be tried again now, or undefined
 * to requeue it. The same limits as nextAttemptAt: requeued past them, a message whose attempts
 * keep dying with their worker would go round between queued and sending forever.
 */
export function reapGiveUpReason(policy: RetryPolicy, attempts: number, createdAt: number, now: number): string | undefined {
  switch (exhausted(policy, attempts, createdAt, now)) {
    case 'attempts':
      return `gave up after ${attempts} attempts: ${LEASE_LOST}`;
    case 'age':
      return `gave up: the message is older than ${duration(policy.maxAgeMs)} and ${LEASE_LOST}`;
    default:
      return undefined;
  }
}

function duration(ms: number): string {
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1000} s`;
}

/**
 * When a message that failed for now is tried again: at the provider's Retry-After when it gave
 * one (exactly: it said when it will take mail again, sooner is refused again and later loses
 * time), else on the schedule; undefined when the policy's limits (attempts, age) forbid it.
 */
export function retryAt(
  policy: RetryPolicy,
  m: { attempts: number; created_at: number },
  now: number,
  retryAfterMs: number | undefined,
  random?: () => number,
): number | undefined {
  const scheduled = nextAttemptAt(policy, m.attempts, m.created_at, now, random);
  if (scheduled === undefined || retryAfterMs === undefined) return scheduled;
  const at = now + Math.max(0, retryAfterMs);
  return at - m.created_at > policy.maxAgeMs ? undefined : at;
}
