import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { createWebhookHttp } from '../../src/webhooks/http-post.js';
import { generateSecret, webhookHeaders } from '../../src/webhooks/signing.js';
import { checkEndpointUrl, type LookupFn } from '../../src/webhooks/url-guard.js';
import type { WebhookHttp, WebhookUrlPolicy } from '../../src/webhooks/types.js';

const development: WebhookUrlPolicy = { production: false, allowPrivate: false };
const production: WebhookUrlPolicy = { production: true, allowPrivate: false };
const productionAllowPrivate: WebhookUrlPolicy = { production: true, allowPrivate: true };
const secret = generateSecret();
const payload = JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: {} });

interface Receiver {
  url: string;
  port: number;
  requests: { headers: Record<string, string>; body: string }[];
  connections: number;
}

const servers: (Server | TcpServer)[] = [];
const clients: WebhookHttp[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          if ('closeAllConnections' in s) s.closeAllConnections();
          s.close(() => resolve());
        }),
    ),
  );
});

function client(policy: WebhookUrlPolicy, timeoutMs = 2_000, lookup?: LookupFn): WebhookHttp {
  const http = createWebhookHttp({ policy, timeoutMs, ...(lookup === undefined ? {} : { lookup }) });
  clients.push(http);
  return http;
}

/** A loopback receiver: verifies every request with standardwebhooks, then answers with `handle`. */
async function receiver(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<Receiver> {
  const state: Receiver = { url: '', port: 0, requests: [], connections: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const body = Buffer.concat(chunks).toString('utf8');
      new Webhook(secret).verify(body, headers); // throws, failing the request, if the signature is wrong
      state.requests.push({ headers, body });
      handle(req, res);
    });
  });
  server.on('connection', () => {
    state.connections += 1;
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as AddressInfo).port;
  state.url = `http://127.0.0.1:${state.port}/hook`;
  return state;
}

/** A bare TCP listener that only counts connections: proves a refused request never left. */
async function tcpCounter(): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const server = createTcpServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, connections: () => connections };
}

function signed(): Record<string, string> {
  return webhookHeaders([secret], 'msg_http_1', Math.floor(Date.now() / 1000), payload);
}

const answers =
  (address: string, family = 4): LookupFn =>
  async () => [{ address, family }];

describe('createWebhookHttp', () => {
  it('posts the signed request and keeps the status and the first 1 KiB of the body', async () => {
    const r = await receiver((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('é'.repeat(1500)));
    const result = await client(development).post(r.url, signed(), payload);
    expect(result.status).toBe(200);
    expect(result.error).toBeNull();
    expect(Buffer.byteLength(result.body ?? '')).toBeLessThanOrEqual(1024);
    expect(result.body?.startsWith('éééé')).toBe(true);
    expect(result.body?.length).toBe(512);
    expect(Number.isInteger(result.durationMs)).toBe(true);
    expect(r.requests).toHaveLength(1);
    expect(r.requests[0]?.body).toBe(payload);
    expect(r.requests[0]?.headers['content-type']).toBe('application/json');
    expect(r.requests[0]?.headers['user-agent']).toBe('mailroom-webhooks/1');
  });

  it('reuses the connection for the next request (keep-alive)', async () => {
    const r = await receiver((_req, res) => res.writeHead(204).end());
    const http = client(development);
    for (let i = 0; i < 5; i += 1) expect((await http.post(r.url, signed(), payload)).status).toBe(204);
    expect(r.requests).toHaveLength(5);
    // undici may open a second connection while the first is being released; never one per request.
    expect(r.connections).toBeLessThanOrEqual(2);
  });

  it('does not follow a redirect: the 302 is the result and the other server receives nothing', async () => {
    const other = await receiver((_req, res) => res.writeHead(200).end('followed'));
    const r = await receiver((_req, res) => res.writeHead(302, { location: other.url }).end());
    const result = await client(development).post(r.url, signed(), payload);
    expect(result).toMatchObject({ status: 302, error: null });
    expect(other.requests).toHaveLength(0);
    expect(other.connections).toBe(0);
  });

  it('ends a request to a receiver that never answers at the timeout, while another completes', async () => {
    const hanging = await receiver(() => undefined);
    const healthy = await receiver((_req, res) => res.writeHead(200).end('ok'));
    const http = client(development, 300);
    const done: string[] = [];
    const [slow, fast] = await Promise.all([
      http.post(hanging.url, signed(), payload).finally(() => done.push('hanging')),
      http.post(healthy.url, signed(), payload).finally(() => done.push('healthy')),
    ]);
    expect(slow).toMatchObject({ status: null, body: null, error: 'timeout after 0.3 s' });
    expect(fast).toMatchObject({ status: 200, body: 'ok', error: null });
    // The healthy one did not queue behind the hanging one's timeout.
    expect(done).toEqual(['healthy', 'hanging']);
    expect(hanging.requests).toHaveLength(1);
  });

  it('ends a request whose body trickles at the timeout', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('.'), 20);
      res.on('close', () => clearInterval(timer));
    });
    const result = await client(development, 300).post(r.url, signed(), payload);
    expect(result).toMatchObject({ status: null, error: 'timeout after 0.3 s' });
  });

  it('stops reading a huge body after 64 KiB instead of downloading it', async () => {
    const chunk = Buffer.alloc(16 * 1024, 'x');
    const total = 64 * 1024 * 1024;
    let written = 0;
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const pump = (): void => {
        while (written < total && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!res.destroyed) res.end();
      };
      pump();
    });
    const result = await client(development).post(r.url, signed(), payload);
    expect(result.status).toBe(200);
    expect(result.body).toBe('x'.repeat(1024));
    expect(written).toBeLessThan(total);
  });

  it('returns connection refused as an error, never throwing', async () => {
    const closed = await tcpCounter();
    const port = closed.port;
    await new Promise<void>((resolve) => servers.pop()?.close(() => resolve()));
    const result = await client(development).post(`http://127.0.0.1:${port}/hook`, signed(), payload);
    expect(result.status).toBeNull();
    expect(result.body).toBeNull();
    expect(result.error).toMatch(/ECONNREFUSED/);
  });

  it('returns a TLS failure (https to a plain HTTP server) as an error', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end());
    const result = await client(development).post(`https://127.0.0.1:${r.port}/hook`, signed(), payload);
    expect(result.status).toBeNull();
    expect(result.error).toBeTruthy();
    expect(r.requests).toHaveLength(0);
  });

  it('returns an unusable URL as an error', async () => {
    const http = client(development);
    expect(await http.post('not a url', signed(), payload)).toMatchObject({ status: null, error: expect.stringMatching(/url/) });
    expect(await http.post('file:///etc/passwd', signed(), payload)).toMatchObject({
      status: null,
      error: expect.stringMatching(/url/),
    });
  });

  it('resolves names with the injected lookup', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end('named'));
    const result = await client(development, 2_000, answers('127.0.0.1')).post(
      `http://receiver.test:${r.port}/hook`,
      signed(),
      payload,
    );
    expect(result).toMatchObject({ status: 200, body: 'named' });
    expect(r.requests[0]?.headers.host).toBe(`receiver.test:${r.port}`);
  });
});

describe('createWebhookHttp in production', () => {
  it('refuses an IP literal in a blocked range before connecting', async () => {
    const counter = await tcpCounter();
    const http = client(production);
    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', '2130706433']) {
      const result = await http.post(`https://${host}:${counter.port}/hook`, signed(), payload);
      expect(result).toMatchObject({ status: null, body: null, error: expect.stringMatching(/blocked address/) });
    }
    expect(await http.post(`http://127.0.0.1:${counter.port}/hook`, signed(), payload)).toMatchObject({
      status: null,
      error: 'url must use https in production',
    });
    expect(counter.connections()).toBe(0);
  });

  it('refuses a name resolving to a private address at connection time', async () => {
    const counter = await tcpCounter();
    const http = client(production, 2_000, answers('10.0.0.1'));
    const result = await http.post(`https://internal.example.com:${counter.port}/hook`, signed(), payload);
    expect(result).toMatchObject({ status: null, body: null, error: expect.stringMatching(/blocked address/) });
    expect(counter.connections()).toBe(0);
  });

  it('catches DNS rebinding: public at registration, loopback at connection time', async () => {
    const counter = await tcpCounter();
    const url = `https://rebind.example.com:${counter.port}/hook`;
    expect(await checkEndpointUrl(url, production, answers('93.184.215.14'))).toBeNull();
    const result = await client(production, 2_000, answers('127.0.0.1')).post(url, signed(), payload);
    expect(result).toMatchObject({ status: null, error: expect.stringMatching(/blocked address.*127\.0\.0\.1/) });
    const v6 = await client(production, 2_000, answers('::1', 6)).post(url, signed(), payload);
    expect(v6).toMatchObject({ status: null, error: expect.stringMatching(/blocked address/) });
    expect(counter.connections()).toBe(0);
  });

  it('lets loopback through with MAILROOM_WEBHOOK_ALLOW_PRIVATE=true', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end('private ok'));
    const http = client(productionAllowPrivate, 2_000, answers('127.0.0.1'));
    expect(await http.post(r.url, signed(), payload)).toMatchObject({ status: 200, body: 'private ok' });
    expect(await http.post(`http://receiver.internal:${r.port}/hook`, signed(), payload)).toMatchObject({ status: 200 });
    expect(r.requests).toHaveLength(2);
  });

  it('https is required for public addresses with MAILROOM_WEBHOOK_ALLOW_PRIVATE=true: http only to private ones', async () => {
    const counter = await tcpCounter();
    const literal = await client(productionAllowPrivate).post(`http://93.184.215.14:${counter.port}/hook`, signed(), payload);
    expect(literal).toMatchObject({
      status: null,
      error: expect.stringMatching(/^url must use https in production: 93\.184\.215\.14 is a public address/),
    });
    // A name is judged by its addresses at connection time.
    const named = await client(productionAllowPrivate, 2_000, answers('93.184.215.14')).post(
      `http://public.example.com:${counter.port}/hook`,
      signed(),
      payload,
    );
    expect(named).toMatchObject({
      status: null,
      error: expect.stringMatching(/public address over http: public\.example\.com resolves to 93\.184\.215\.14/),
    });
    expect(counter.connections()).toBe(0);
  });
});

describe('loading the webhook client', () => {
  it("leaves the process's global fetch dispatcher alone (Node's fetch keeps its own undici)", async () => {
    await import('../../src/webhooks/http-post.js');
    await import('../../src/delivery/transports/http-client.js');
    const { Agent } = await import('../../src/net/undici.js');
    // Unset, or Node's own (set by a fetch made earlier in this process): never the package's.
    expect((globalThis as Record<symbol, unknown>)[Symbol.for('undici.globalDispatcher.1')] instanceof Agent).toBe(false);
  });
});
