import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
// autocannon ships CommonJS without types; this is the part of its result we read.
interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  duration: number;
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;
const autocannon = require('autocannon') as Autocannon;

export interface LoadFigures {
  rps: number;
  p50: number;
  p99: number;
  /** Answers with a 2xx status (the sends accepted). */
  ok: number;
  /** Seconds the load ran. */
  seconds: number;
  non2xx: number;
  errors: number;
}

const SETUP_REQUEST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bench/setup-request.cjs');

/**
 * Load from a worker thread, so the generator does not share the event loop of a server in this
 * process. `uniqueIdempotencyKey` gives every request its own key; `keysFile` (one private key a
 * line) also spreads the requests round-robin over those keys (setup-request.cjs reads it from
 * BENCH_KEYS_FILE, which the worker thread inherits when autocannon starts it).
 */
export async function httpLoad(opts: {
  url: string;
  body: string;
  headers: Record<string, string>;
  seconds: number;
  connections: number;
  uniqueIdempotencyKey?: boolean;
  keysFile?: string;
  /** Stop after this many requests instead of after `seconds`. */
  amount?: number;
}): Promise<LoadFigures> {
  const setup = opts.uniqueIdempotencyKey === true || opts.keysFile !== undefined;
  if (opts.keysFile === undefined) delete process.env.BENCH_KEYS_FILE;
  else process.env.BENCH_KEYS_FILE = opts.keysFile;
  const result = await autocannon({
    url: opts.url,
    method: 'POST',
    headers: opts.headers,
    body: opts.body,
    connections: opts.connections,
    ...(opts.amount === undefined ? { duration: opts.seconds } : { amount: opts.amount }),
    workers: 1,
    ...(setup ? { requests: [{ setupRequest: SETUP_REQUEST }] } : {}),
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result['2xx'],
    seconds: result.duration,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}
