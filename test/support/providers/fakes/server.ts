import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The loopback HTTP server under each provider fake: reads the whole request, hands it to the
 * fake's handler, records what came in. A scripted answer (`script`) is served before the
 * handler's own checks pass it through, so a test can make the fake answer any documented error.
 */

export interface FakeRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface FakeAnswer {
  status: number;
  body?: string | object;
  headers?: Record<string, string>;
}

export interface FakeServer {
  url: string;
  port: number;
  /** Every request received, in order (scripted ones too). */
  requests: FakeRequest[];
  /**
   * Answers served, in order, to the next requests on `path` (or any path when no path is given);
   * `after`: that many matching requests pass through to the handler first (a second request fails).
   */
  script(answer: ScriptedAnswer): void;
  close(): Promise<void>;
}

export type ScriptedAnswer = FakeAnswer & { path?: string; after?: number };

export type FakeHandler = (req: FakeRequest) => FakeAnswer;

export async function startFake(handler: FakeHandler): Promise<FakeServer> {
  const requests: FakeRequest[] = [];
  const scripted: ScriptedAnswer[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: FakeRequest = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      requests.push(r);
      const i = scripted.findIndex((s) => s.path === undefined || s.path === r.path);
      const pending = i >= 0 ? scripted[i] : undefined;
      let answer: FakeAnswer;
      if (pending === undefined) answer = handler(r);
      else if ((pending.after ?? 0) > 0) {
        pending.after = (pending.after ?? 0) - 1;
        answer = handler(r);
      } else answer = scripted.splice(i, 1)[0]!;
      const body = answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
      const type = typeof answer.body === 'object' ? { 'content-type': 'application/json' } : {};
      res.writeHead(answer.status, { ...type, ...answer.headers });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    script: (answer) => {
      scripted.push(answer);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The request's JSON body as an object (a fake answers 400/422 for anything else). */
export function jsonBody(req: FakeRequest): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(req.body.toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? Object.fromEntries(Object.entries(v)) : undefined;
  } catch {
    return undefined;
  }
}

export const isBase64 = (s: unknown): s is string =>
  typeof s === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0;
