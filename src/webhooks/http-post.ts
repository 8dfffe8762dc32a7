import { performance } from 'node:perf_hooks';
import { Agent, request } from '../net/undici.js';
import type { PostResult, WebhookHttp, WebhookUrlPolicy } from './types.js';
import { addressRule, forbiddenAddress, guardedLookup, ipLiteral, parseEndpointUrl, type LookupFn } from './url-guard.js';

/**
 * The one pooled HTTP client the webhooks post with. Never follows redirects (a 3xx is a status
 * like any other non-2xx), never throws (every failure is `{ status: null, error }`), and bounds a
 * whole attempt — connect, headers and body — by one deadline, so a receiver that accepts and then
 * stalls or trickles cannot hold a worker past it.
 */

/** Read at most this much of an answer, then drop the connection: receivers can send gigabytes. */
const MAX_BODY_READ = 64 * 1024;
/** What the delivery log keeps of it (the "first 1 KB"). */
const KEPT_BODY = 1024;
/** Idle keep-alive connections per origin when the caller does not say (the dispatcher's per-endpoint limit is 4). */
const DEFAULT_CONNECTIONS_PER_ORIGIN = 8;
const BACKSTOP_MS = 1_000;
/** undici's timeout errors: the same outcome as the deadline. */
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

export interface WebhookHttpOptions {
  policy: WebhookUrlPolicy;
  /** The whole attempt's deadline (15 s in production). */
  timeoutMs: number;
  maxConnectionsPerOrigin?: number;
  /** Name resolution at connection time (tests inject one); the policy is applied to its answers. */
  lookup?: LookupFn;
}

export function createWebhookHttp(options: WebhookHttpOptions): WebhookHttp {
  const { policy, timeoutMs } = options;
  // undici's own timers are a backstop a second behind the attempt's deadline, so the deadline's
  // abort (and its "timeout after N s") normally wins; their errors read the same if not.
  const backstopMs = timeoutMs + BACKSTOP_MS;
  // One pool per scheme: with MAILROOM_WEBHOOK_ALLOW_PRIVATE=true, https may reach any address
  // but http only private ones, and the connection-time lookup is where a name's addresses are known.
  const agentFor = (protocol: 'http:' | 'https:'): Agent =>
    new Agent({
      connections: options.maxConnectionsPerOrigin ?? DEFAULT_CONNECTIONS_PER_ORIGIN,
      headersTimeout: backstopMs,
      bodyTimeout: backstopMs,
      connect: {
        timeout: backstopMs,
        ...(options.lookup === undefined && addressRule(policy, protocol) === 'any'
          ? {}
          : { lookup: guardedLookup(policy, options.lookup, protocol) }),
      },
    });
  const agents = { 'http:': agentFor('http:'), 'https:': agentFor('https:') };

  async function post(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<PostResult> {
    const started = performance.now();
    const done = (status: number | null, kept: string | null, error: string | null): PostResult => ({
      status,
      durationMs: Math.round(performance.now() - started),
      body: kept,
      error,
    });
    const parsed = parseEndpointUrl(url);
    const refused = typeof parsed === 'string' ? parsed : refusal(parsed, policy);
    if (typeof parsed === 'string' || refused !== null) return done(null, null, refused);

    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const response = await request(parsed.protocol === 'http:' ? agents['http:'] : agents['https:'], {
        origin: parsed.origin,
        path: `${parsed.pathname}${parsed.search}`,
        method: 'POST',
        headers: { ...headers },
        body,
        signal: controller.signal,
      });
      const kept = await readHead(response.body);
      return done(response.statusCode, kept, null);
    } catch (error) {
      if (controller.signal.aborted || TIMEOUT_CODES.has(errorCode(error) ?? '')) {
        return done(null, null, `timeout after ${formatSeconds(timeoutMs)} s`);
      }
      return done(null, null, describe(error));
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    post,
    close: async () => {
      await Promise.all([agents['http:'].close(), agents['https:'].close()]);
    },
  };
}

/**
 * Why this URL may not be fetched now, before any connection: undici (net.connect) skips the
 * lookup for an address literal, so a literal the rule forbids is refused here instead.
 */
function refusal(parsed: URL, policy: WebhookUrlPolicy): string | null {
  const rule = addressRule(policy, parsed.protocol);
  if (rule === 'any') return null;
  if (rule === 'public' && parsed.protocol !== 'https:') return 'url must use https in production';
  const literal = ipLiteral(parsed.hostname);
  const bad = literal === null ? undefined : forbiddenAddress(rule, [literal]);
  if (bad === undefined) return null;
  return rule === 'private' ? `url must use https in production: ${bad} is a public address` : `blocked address: ${bad}`;
}

/** Up to 64 KiB of the body, then the stream is destroyed; the first 1 KiB is returned as text. */
async function readHead(stream: AsyncIterable<Uint8Array> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let read = 0;
  for await (const chunk of stream) {
    chunks.push(Buffer.from(chunk));
    read += chunk.byteLength;
    if (read >= MAX_BODY_READ) {
      stream.destroy();
      break;
    }
  }
  // NUL cannot be stored in a PostgreSQL text column; the log is for people, so it goes.
  return Buffer.concat(chunks).subarray(0, KEPT_BODY).toString('utf8').replaceAll('\u0000', '');
}

function formatSeconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

function errorCode(error: unknown): string | null {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : null;
}

/**
 * One line for the log: the system error code when the message lacks it (ECONNREFUSED,
 * CERT_HAS_EXPIRED…). Happy Eyeballs (several addresses tried) fails with an AggregateError whose
 * own message is empty: its first error speaks for it.
 */
function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors[0] !== undefined && error.message === '') return describe(error.errors[0]);
  if (!(error instanceof Error)) return String(error);
  const code = errorCode(error);
  const message = error.message || error.name;
  if (code === null || message.includes(code) || message.startsWith('blocked address')) return message;
  return `${code}: ${message}`;
}
