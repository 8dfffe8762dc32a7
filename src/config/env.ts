import path from 'node:path';
import { submissionSettings, type SubmissionSettings } from './env-submission.js';
import { tlsFiles, type TlsFiles } from './tls.js';
import { breakerSettings, webhookSettings, type BreakerSettings, type WebhookSettings } from './env-sections.js';

/** Everything the process reads from its environment, parsed once at start and frozen. */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly baseUrl: string;
  readonly docsUrl: string;
  readonly databaseUrl: string;
  readonly redisUrl: string | undefined;
  readonly adminToken: string | undefined;
  /** How long an operator UI sign-in lasts (MAILROOM_UI_SESSION_HOURS, default 12). */
  readonly uiSessionMs: number;
  readonly configFile: string | undefined;
  readonly env: 'development' | 'production';
  readonly dataDir: string;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Largest request body accepted (JSON or multipart), in bytes. */
  readonly bodyLimitBytes: number;
  /**
   * PEM certificate chain and private key files: `mailroom serve` speaks HTTPS with them and
   * reads them again on SIGHUP. Unset: plain HTTP (behind a proxy that terminates TLS).
   */
  readonly tls: TlsFiles | undefined;
  /** Port on which `mailroom worker` serves /metrics and /v1/health; unset: it listens nowhere. */
  readonly metricsPort: number | undefined;
  /** When set, /metrics (API and worker) answers only `Authorization: Bearer <token>`. */
  readonly metricsToken: string | undefined;
  /**
   * The inbound SMTP listener `mailroom serve` runs for bounces and feedback reports sent to
   * VERP addresses (MAILROOM_INBOUND_SMTP_PORT, MAILROOM_INBOUND_SMTP_HOST); unset: none.
   */
  readonly inboundSmtp: { readonly port: number; readonly host: string } | undefined;
  /** The SMTP submission listener of `mailroom serve` (issue 28, src/config/env-submission.ts); unset port: none. */
  readonly submission: SubmissionSettings | undefined;
  /** Whether `mailroom serve` also runs a delivery worker (MAILROOM_WORKER=off for API-only). */
  readonly runWorker: boolean;
  readonly worker: {
    /** A claim expires after this; the reaper then gives the message to another worker. */
    readonly leaseMs: number;
    readonly batchSize: number;
    readonly pollMs: number;
  };
  /** `s3://bucket[/prefix]?endpoint=…` for S3-compatible attachment storage; unset: `<data_dir>/blobs`. */
  readonly blobUrl: string | undefined;
  /** Messages older than this are gone from reads (404, absent from history) and purged. */
  readonly retentionDays: number;
  /**
   * Refused public API requests (4xx) kept in the request log (issue 29), days; reads and the
   * purge go by it. 0: the log is off (nothing recorded; the purge removes what was kept).
   */
  readonly requestLogDays: number;
  /** Test-mode messages' retention (issue 27), days; reads and the purge use min(this, retentionDays). */
  readonly testRetentionDays: number;
  /** How long delay@simulator.mailroom.test is deferred before it is accepted (issue 27), ms. */
  readonly simulatorDelayMs: number;
  /** Proxy addresses whose X-Forwarded-For is believed; empty: the socket address is the client. */
  readonly trustProxy: readonly string[];
  readonly turnstile: {
    readonly siteKey: string | undefined;
    readonly secretKey: string | undefined;
    readonly verifyUrl: string;
    /** A siteverify call that takes longer is abandoned: the send gets 503, never an unverified pass. */
    readonly timeoutMs: number;
  };
  /**
   * Hosts SNS signing certificates and SubscribeURLs may come from (MAILROOM_SNS_CERT_HOSTS):
   * patterns where `*` is one DNS label, optional `:port` (src/events/sources/sns-verify.ts).
   */
  readonly snsCertHosts: readonly string[];
  /** Outbound webhooks (issue 13): retries, timeouts, rotation grace, pacing, URL rules. */
  readonly webhooks: WebhookSettings;
  /** Each service's circuit breaker (issue 14): MAILROOM_BREAKER_* (defaults 5 failures in 60 s, half-open after 30 s). */
  readonly breaker: BreakerSettings;
  /** Request rate limits and anomaly detection (src/protection/rate-limits.ts). */
  readonly limits: {
    /** Per-organization guard on public-key requests that fail before the template and CAPTCHA checks. */
    readonly floodPerSecond: number;
    /** A limit check that waits longer on its store (Redis) counts as a store failure. */
    readonly backendTimeoutMs: number;
    readonly anomaly: {
      readonly enabled: boolean;
      /** Public-key requests in one 10-second window below which nothing is a spike. */
      readonly minRequests: number;
      /** A spike is a 10-second count above this many times the trailing 10-minute average. */
      readonly factor: number;
      /** How long an organization stays slowed after the last 10-second window that was a spike. */
      readonly cooldownMs: number;
    };
  };
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** MAILROOM_ADMIN_TOKEN's shortest length: 32 hex characters are 128 bits (`openssl rand -hex 24` makes 48). */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

/**
 * Parses the MAILROOM_* variables. Every bad value is reported at once, each naming its
 * variable, so an operator fixes them in one round.
 */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min || n > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return n;
  };
  const url = (name: string, fallback: string, protocols: readonly string[]): string => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) throw new Error('protocol');
      return raw.replace(/\/+$/, '');
    } catch {
      problems.push(`${name} must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}, got "${raw}"`);
      return fallback;
    }
  };
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    problems.push(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
    return fallback;
  };

  const port = int('MAILROOM_PORT', 8080, 0, 65535);
  const host = read('MAILROOM_HOST') ?? '0.0.0.0';
  const tls = tlsFiles(read, 'MAILROOM_TLS_CERT_FILE', 'MAILROOM_TLS_KEY_FILE', cwd, problems);
  const baseUrl = url('MAILROOM_BASE_URL', `${tls === undefined ? 'http' : 'https'}://localhost:${port}`, ['http:', 'https:']);
  const docsUrl = url('MAILROOM_DOCS_URL', `${baseUrl}/docs`, ['http:', 'https:']);
  const dataDir = path.resolve(cwd, read('MAILROOM_DATA_DIR') ?? './data');

  const rawDb = read('MAILROOM_DATABASE_URL');
  let databaseUrl = `sqlite:${path.join(dataDir, 'mailroom.db')}`;
  if (rawDb !== undefined) {
    if (/^postgres(ql)?:\/\//.test(rawDb)) databaseUrl = rawDb;
    else if (rawDb.startsWith('sqlite:') && rawDb.length > 'sqlite:'.length) {
      const file = rawDb.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
      databaseUrl = file === ':memory:' ? 'sqlite::memory:' : `sqlite:${path.resolve(cwd, file)}`;
    } else problems.push(`MAILROOM_DATABASE_URL must be sqlite:PATH or postgres://…, got "${rawDb}"`);
  }

  const rawRedis = read('MAILROOM_REDIS_URL');
  const redisUrl = rawRedis === undefined ? undefined : url('MAILROOM_REDIS_URL', '', ['redis:', 'rediss:']) || undefined;

  const adminToken = read('MAILROOM_ADMIN_TOKEN');
  // 32 characters: the right token is accepted even from an address locked out for wrong ones
  // (src/admin/routes/auth.ts), so its length, not the lockout, is what stops guessing.
  if (adminToken !== undefined && adminToken.length < MIN_ADMIN_TOKEN_LENGTH) {
    problems.push(
      `MAILROOM_ADMIN_TOKEN must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters, it ` +
        `has ${adminToken.length} (it guards the whole admin API; make one with: openssl rand -hex 24)`,
    );
  }
  const metricsToken = read('MAILROOM_METRICS_TOKEN');
  if (metricsToken !== undefined && metricsToken.length < 16) {
    problems.push('MAILROOM_METRICS_TOKEN must be at least 16 characters');
  }
  const rawMetricsPort = read('MAILROOM_METRICS_PORT');
  const metricsPort = rawMetricsPort === undefined ? undefined : int('MAILROOM_METRICS_PORT', 0, 0, 65535);
  const rawConfig = read('MAILROOM_CONFIG');
  const configFile = rawConfig === undefined ? undefined : path.resolve(cwd, rawConfig);
  const rawInboundPort = read('MAILROOM_INBOUND_SMTP_PORT');
  const inboundSmtp =
    rawInboundPort === undefined
      ? undefined
      : { port: int('MAILROOM_INBOUND_SMTP_PORT', 25, 0, 65535), host: read('MAILROOM_INBOUND_SMTP_HOST') ?? '0.0.0.0' };
  // Read where it is used (src/delivery/verp.ts: transports run in threads); checked here so a
  // weak value stops the start instead of signing bounce addresses.
  const verpSecret = read('MAILROOM_VERP_SECRET');
  if (verpSecret !== undefined && verpSecret.length < 32)
    problems.push('MAILROOM_VERP_SECRET must be at least 32 characters (it signs VERP bounce addresses)');

  const config: Config = {
    port,
    host,
    baseUrl,
    docsUrl,
    databaseUrl,
    redisUrl,
    adminToken,
    uiSessionMs: int('MAILROOM_UI_SESSION_HOURS', 12, 1, 24 * 30) * 3_600_000,
    configFile,
    env: oneOf('MAILROOM_ENV', ['development', 'production'] as const, 'development'),
    dataDir,
    logLevel: oneOf('MAILROOM_LOG_LEVEL', LOG_LEVELS, 'info'),
    // 25 MiB of attachments grow by 4/3 in base64; 40 MiB leaves room for the JSON around them.
    bodyLimitBytes: int('MAILROOM_BODY_LIMIT_BYTES', 40 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    tls,
    metricsPort,
    metricsToken,
    inboundSmtp,
    submission: submissionSettings(read, int, oneOf, problems, cwd, tls),
    runWorker: oneOf('MAILROOM_WORKER', ['on', 'off'] as const, 'on') === 'on',
    worker: {
      leaseMs: int('MAILROOM_WORKER_LEASE_SECONDS', 300, 1, 86_400) * 1000,
      batchSize: int('MAILROOM_WORKER_BATCH', 50, 1, 1000),
      pollMs: int('MAILROOM_WORKER_POLL_MS', 500, 10, 60_000),
    },
    blobUrl: url('MAILROOM_BLOB_URL', '', ['s3:']) || undefined,
    retentionDays: int('MAILROOM_RETENTION_DAYS', 30, 1, 3650),
    // Three days covers a weekend's "why did our form stop sending"; 0 switches the log off.
    requestLogDays: int('MAILROOM_REQUEST_LOG_DAYS', 3, 0, 3650),
    // A week keeps a CI run's captures readable across a weekend; up to 10 years like the live setting.
    testRetentionDays: int('MAILROOM_TEST_RETENTION_DAYS', 7, 1, 3650),
    // 60 s: long enough to see `deferred` in a test's timeline, short enough to wait for; at most an hour.
    simulatorDelayMs: int('MAILROOM_SIMULATOR_DELAY_SECONDS', 60, 1, 3600) * 1000,
    trustProxy: (read('MAILROOM_TRUST_PROXY') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    turnstile: {
      siteKey: read('MAILROOM_TURNSTILE_SITE_KEY'),
      secretKey: read('MAILROOM_TURNSTILE_SECRET_KEY'),
      verifyUrl: url('MAILROOM_TURNSTILE_VERIFY_URL', 'https://challenges.cloudflare.com/turnstile/v0/siteverify', [
        'http:',
        'https:',
      ]),
      timeoutMs: int('MAILROOM_TURNSTILE_TIMEOUT_MS', 5000, 100, 60_000),
    },
    snsCertHosts: snsCertHosts(read('MAILROOM_SNS_CERT_HOSTS'), problems),
    webhooks: webhookSettings(read, int, oneOf, problems),
    breaker: breakerSettings(int),
    limits: {
      // The spec asks for a flood guard of at least 50 requests per second.
      floodPerSecond: int('MAILROOM_FLOOD_GUARD_PER_SECOND', 50, 50, 1_000_000),
      backendTimeoutMs: int('MAILROOM_RATE_LIMIT_TIMEOUT_MS', 1000, 10, 60_000),
      anomaly: {
        enabled: oneOf('MAILROOM_ANOMALY_DETECTION', ['on', 'off'] as const, 'on') === 'on',
        minRequests: int('MAILROOM_ANOMALY_MIN_REQUESTS', 50, 1, 1_000_000),
        factor: int('MAILROOM_ANOMALY_FACTOR', 10, 1, 10_000),
        cooldownMs: int('MAILROOM_ANOMALY_COOLDOWN_SECONDS', 60, 2, 86_400) * 1000,
      },
    },
  };
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  return deepFreeze(config);
}

/**
 * SNS certificate host patterns. A pattern needs two literal labels at least (`*.com` or `*`
 * would let anyone's host sign SES events; `localhost` is the one exception, for tests);
 * labels are letters, digits, hyphens or `*`.
 */
function snsCertHosts(raw: string | undefined, problems: string[]): string[] {
  if (raw === undefined) return ['sns.*.amazonaws.com'];
  const patterns = raw
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  for (const p of patterns) {
    const host = p.replace(/:\d{1,5}$/, '');
    const labels = host.split('.');
    const literal = labels.filter((l) => l !== '*').length;
    if (!labels.every((l) => l === '*' || /^[a-z0-9-]+$/.test(l)) || (literal < 2 && host !== 'localhost')) {
      problems.push(
        `MAILROOM_SNS_CERT_HOSTS: "${p}" must be a host pattern like ` +
          `sns.*.amazonaws.com (* is one label; two labels at least are literal)`,
      );
    }
  }
  return patterns;
}

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
