import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from './smtp-sink.js';

/**
 * A local HTTP server speaking Cloudflare Turnstile's siteverify wire format: a form-encoded
 * POST of `secret`, `response`, optional `remoteip` and `idempotency_key`, answered with
 * `{ success, 'error-codes', hostname, challenge_ts, action, cdata }`.
 *
 * Tokens are issued with `issue(hostname)`; like Cloudflare, a token verifies once and then
 * answers `timeout-or-duplicate` (unless `acceptReplays` is on, to prove the API refuses
 * replays itself). Cloudflare's published test secrets behave as documented (always pass with
 * hostname example.com, always fail, always "spent"). `mode` simulates trouble: `slow` answers
 * after `delayMs`, `error` answers 500, `internal` answers `internal-error`.
 */
export interface FakeTurnstile {
  url: string;
  secrets: Set<string>;
  calls: Array<{ secret: string; response: string; remoteip: string | undefined; idempotency_key: string | undefined }>;
  acceptReplays: boolean;
  mode: 'normal' | 'slow' | 'error' | 'internal';
  delayMs: number;
  issue(hostname: string): string;
  expire(token: string): void;
  close(): Promise<void>;
}

export const TEST_PASS_SECRET = '1x0000000000000000000000000000000AA';
export const TEST_FAIL_SECRET = '2x0000000000000000000000000000000AA';

export async function startTurnstile(secrets: string[] = []): Promise<FakeTurnstile> {
  const tokens = new Map<string, { hostname: string; used: boolean; expired: boolean }>();
  let counter = 0;
  const fake: FakeTurnstile = {
    url: '',
    secrets: new Set(secrets),
    calls: [],
    acceptReplays: false,
    mode: 'normal',
    delayMs: 0,
    issue(hostname) {
      const token = `XXXX.tok${++counter}.${Math.random().toString(36).slice(2)}`;
      tokens.set(token, { hostname, used: false, expired: false });
      return token;
    },
    expire(token) {
      const t = tokens.get(token);
      if (t !== undefined) t.expired = true;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const answer = (form: URLSearchParams): Record<string, unknown> => {
    const secret = form.get('secret') ?? '';
    const response = form.get('response') ?? '';
    const base = { challenge_ts: new Date().toISOString(), action: '', cdata: '' };
    if (secret === '') return { success: false, 'error-codes': ['missing-input-secret'] };
    if (response === '') return { success: false, 'error-codes': ['missing-input-response'] };
    if (secret === TEST_PASS_SECRET) return { success: true, 'error-codes': [], hostname: 'example.com', ...base };
    if (secret === TEST_FAIL_SECRET) return { success: false, 'error-codes': ['invalid-input-response'] };
    if (!fake.secrets.has(secret)) return { success: false, 'error-codes': ['invalid-input-secret'] };
    const t = tokens.get(response);
    if (t === undefined) return { success: false, 'error-codes': ['invalid-input-response'] };
    if (t.expired || (t.used && !fake.acceptReplays)) return { success: false, 'error-codes': ['timeout-or-duplicate'] };
    t.used = true;
    return { success: true, 'error-codes': [], hostname: t.hostname, ...base };
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      fake.calls.push({
        secret: form.get('secret') ?? '',
        response: form.get('response') ?? '',
        remoteip: form.get('remoteip') ?? undefined,
        idempotency_key: form.get('idempotency_key') ?? undefined,
      });
      const reply = (status: number, body: Record<string, unknown>) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method !== 'POST' || !String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) {
        reply(405, { success: false, 'error-codes': ['bad-request'] });
        return;
      }
      if (fake.mode === 'error') return reply(500, { success: false, 'error-codes': ['internal-error'] });
      if (fake.mode === 'internal') return reply(200, { success: false, 'error-codes': ['internal-error'] });
      const body = answer(form);
      if (fake.mode === 'slow') {
        setTimeout(() => reply(200, body), fake.delayMs).unref();
        return;
      }
      reply(200, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/turnstile/v0/siteverify`;
  return fake;
}

/** A URL where nothing listens (a port that was just free). */
export async function deadUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}/siteverify`;
}
