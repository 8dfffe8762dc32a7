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

/** When to try again after attempt number `attempts` failed, or undefined to give up. */
export function nextAttemptAt(policy: RetryPolicy, attempts: number, createdAt: number, now: number, random: () => number = Math.random): number | undefined {
  if (attempts >= policy.maxAttempts) return undefined;
  const delay = Math.min(policy.maxDelayMs, policy.baseMs * policy.factor ** Math.max(0, attempts - 1));
  const at = now + Math.round(delay * (1 + policy.jitter * (2 * random() - 1)));
  return at - createdAt > policy.maxAgeMs ? undefined : at;
}
