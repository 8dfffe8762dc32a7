import { setMaxListeners } from 'node:events';
import { Pool } from 'undici';

/**
 * Open-loop load: request i is due at start + i / rate, whatever happened to the ones before,
 * and its latency counts from that due time, not from when it left. A closed loop (autocannon's
 * connections, or its fixed-rate mode that sends each second's requests in a burst) waits for
 * answers before sending more, so a server that stalls for 500 ms simply receives fewer
 * requests in that time and the stall never shows in its percentiles.
 */
export interface OpenLoopOptions {
  url: string;
  /** Path and method of every request; the body and headers come from `request(i)`. */
  path: string;
  rate: number;
  seconds: number;
  request: (i: number) => { body: string; headers: Record<string, string> };
  /** Sockets the generator may open; enough that none is ever the wait (default 256). */
  connections?: number;
  /**
   * Requests still unanswered this long (default 30 s) after the last one was due are abandoned
   * and count as errors at that latency, so a server that cannot keep up ends the run in bounded
   * time instead of draining its whole backlog.
   */
  timeoutMs?: number;
}

export interface OpenLoopFigures {
  sent: number;
  /** Milliseconds from due time to the end of the answer. */
  p50: number;
  p99: number;
  p999: number;
  max: number;
  non2xx: number;
  errors: number;
  /** How late the generator itself dispatched at its worst (its own event loop's lag), ms. */
  dispatchLagMax: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0;
}

/**
 * The schedule of an open loop: calls `fire(i, due)` for i = 0 … rate × seconds − 1 once its due
 * time, `startDelayMs` from now plus i / rate (performance.now() ms), has come, never early and
 * never waiting for an earlier request. Resolves after the last call, with the generator's own
 * worst lag (how late it fired against a due time), which a latency figure also contains.
 */
export async function openSchedule(
  rate: number,
  seconds: number,
  fire: (i: number, due: number) => void,
  startDelayMs = 50,
): Promise<{ lagMax: number }> {
  const total = Math.round(rate * seconds);
  const start = performance.now() + startDelayMs;
  let lagMax = 0;
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (next < total) {
        const due = start + (next * 1000) / rate;
        if (due > now) break;
        lagMax = Math.max(lagMax, now - due);
        fire(next, due);
        next += 1;
      }
      if (next >= total) {
        resolve();
        return;
      }
      setTimeout(tick, Math.max(0, Math.floor(start + (next * 1000) / rate - performance.now())));
    };
    setTimeout(tick, startDelayMs);
  });
  return { lagMax };
}

export async function openLoop(o: OpenLoopOptions): Promise<OpenLoopFigures> {
  const timeout = o.timeoutMs ?? 30_000;
  const pool = new Pool(o.url, { connections: o.connections ?? 256, pipelining: 1, keepAliveTimeout: 30_000 });
  const abandon = new AbortController();
  // One signal for every request in flight (thousands when the server falls behind).
  setMaxListeners(0, abandon.signal);
  const total = Math.round(o.rate * o.seconds);
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  const inFlight = new Set<Promise<void>>();
  const fire = (i: number, due: number) => {
    const { body, headers } = o.request(i);
    const p = pool
      .request({ path: o.path, method: 'POST', body, headers, signal: abandon.signal })
      .then(
        async (res) => {
          await res.body.dump();
          latencies.push(performance.now() - due);
          if (res.statusCode < 200 || res.statusCode > 299) non2xx += 1;
        },
        () => {
          latencies.push(performance.now() - due);
          errors += 1;
        },
      )
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  const { lagMax: dispatchLagMax } = await openSchedule(o.rate, o.seconds, fire);
  const deadline = setTimeout(() => abandon.abort(), timeout);
  await Promise.all([...inFlight]);
  clearTimeout(deadline);
  await pool.destroy();
  latencies.sort((a, b) => a - b);
  return {
    sent: total,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    p999: percentile(latencies, 0.999),
    max: latencies[latencies.length - 1] ?? 0,
    non2xx,
    errors,
    dispatchLagMax,
  };
}
