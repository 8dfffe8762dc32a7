import fs from 'node:fs';
import { Pool } from 'undici';
import { openSchedule, percentile } from './open-loop.js';

/**
 * The load of bench/scale.ts, run as a child process so that generating it never shares the
 * server's event loop: `node scale-load.js spec.json` prints one JSON line of figures.
 *
 * - closed: `connections` loops each send the next request as soon as the last is answered
 *   (throughput);
 * - open: request i is due at start + i / rate and its latency counts from then, whatever came
 *   before (bench/open-loop.ts does this for POSTs only; here GETs and POSTs mix).
 *
 * Requests cycle through `requests`; a POST gets a unique Idempotency-Key, so every send is new.
 */
export interface LoadRequest {
  kind: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface LoadSpec {
  url: string;
  mode: 'closed' | 'open';
  seconds: number;
  /** closed: loops at once; open: sockets the generator may open. */
  connections: number;
  /** open only: requests per second. */
  rate?: number;
  requests: LoadRequest[];
  /** Also return every request as [due, latency] in ms since the epoch / ms, by kind. */
  samples?: boolean;
  /**
   * Seconds of the same load first, over the same connections, not counted. Without it the
   * first requests of a run paid for this process's start (its JIT, its 64 connections) and the
   * server's first reads: 67–83 ms p99 of reads on an empty database whose event loop never
   * stalled past 30 ms.
   */
  warmSeconds?: number;
}

export interface KindFigures {
  count: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  non2xx: number;
  errors: number;
}

export interface LoadResult {
  rps: number;
  kinds: Record<string, KindFigures>;
  samples?: Record<string, Array<[number, number]>>;
}

async function run(spec: LoadSpec): Promise<LoadResult> {
  const pool = new Pool(spec.url, { connections: spec.connections, pipelining: 1, keepAliveTimeout: 30_000 });
  try {
    if ((spec.warmSeconds ?? 0) > 0) await runOn(pool, { ...spec, seconds: spec.warmSeconds ?? 0, samples: false }, 'w');
    return await runOn(pool, spec, 'm');
  } finally {
    await pool.close();
  }
}

async function runOn(pool: Pool, spec: LoadSpec, phase: string): Promise<LoadResult> {
  const latencies = new Map<string, number[]>();
  const samples: Record<string, Array<[number, number]>> = {};
  const failures = new Map<string, { non2xx: number; errors: number }>();
  const keyPrefix = `s${process.pid.toString(36)}${Date.now().toString(36)}${phase}`;
  let n = 0;
  let answered = 0;
  const one = async (due: number): Promise<void> => {
    const i = n++;
    const r = spec.requests[i % spec.requests.length];
    if (r === undefined) throw new Error('no requests');
    const headers = r.method === 'POST' ? { ...r.headers, 'idempotency-key': `${keyPrefix}-${i}` } : r.headers;
    const list = latencies.get(r.kind) ?? [];
    latencies.set(r.kind, list);
    const fail = failures.get(r.kind) ?? { non2xx: 0, errors: 0 };
    failures.set(r.kind, fail);
    try {
      const res = await pool.request({
        path: r.path,
        method: r.method,
        headers,
        ...(r.body !== undefined ? { body: r.body } : {}),
      });
      await res.body.dump();
      if (res.statusCode < 200 || res.statusCode > 299) fail.non2xx += 1;
    } catch {
      fail.errors += 1;
    }
    const latency = performance.now() - due;
    list.push(latency);
    if (spec.samples === true) {
      const kindSamples = samples[r.kind] ?? [];
      samples[r.kind] = kindSamples;
      kindSamples.push([Math.round(performance.timeOrigin + due), latency]);
    }
    answered += 1;
  };
  const t0 = performance.now();
  const end = t0 + spec.seconds * 1000;
  if (spec.mode === 'closed') {
    const loop = async () => {
      while (performance.now() < end) await one(performance.now());
    };
    await Promise.all(Array.from({ length: spec.connections }, loop));
  } else {
    const inFlight = new Set<Promise<void>>();
    await openSchedule(
      spec.rate ?? 100,
      spec.seconds,
      (_i, due) => {
        const p = one(due).finally(() => inFlight.delete(p));
        inFlight.add(p);
      },
      0,
    );
    await Promise.all([...inFlight]);
  }
  const seconds = (performance.now() - t0) / 1000;
  const kinds: Record<string, KindFigures> = {};
  for (const [kind, list] of latencies) {
    list.sort((a, b) => a - b);
    const fail = failures.get(kind) ?? { non2xx: 0, errors: 0 };
    kinds[kind] = {
      count: list.length,
      p50: percentile(list, 0.5),
      p99: percentile(list, 0.99),
      p999: percentile(list, 0.999),
      max: list[list.length - 1] ?? 0,
      ...fail,
    };
  }
  return { rps: answered / seconds, kinds, ...(spec.samples === true ? { samples } : {}) };
}

const specFile = process.argv[2];
if (specFile !== undefined) {
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8')) as LoadSpec;
  run(spec).then(
    (r) => {
      process.stdout.write(`${JSON.stringify(r)}\n`);
    },
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
