import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createProviderHttp, ProviderConnectionError } from '../../src/delivery/transports/http-client.js';
import { describe as describeAnswer, retryAfterMs, verifyFailure } from '../../src/delivery/transports/http-errors.js';

async function server(handler: http.RequestListener): Promise<{ url: string; port: number; close(): Promise<void> }> {
  const s = http.createServer(handler);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  };
}

describe('provider HTTP client', () => {
  it(
    'answers, no redirect followed, multipart serialised, a hanging ' +
      'server → timeout, nothing listening → connect, unknown host → service',
    async () => {
      const seen: string[] = [];
      const s = await server((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          seen.push(`${req.method} ${req.url} ${String(req.headers['content-type'])} ${Buffer.concat(chunks).toString()}`);
          if (req.url === '/hang') return;
          if (req.url === '/redirect') {
            res.writeHead(302, { location: '/elsewhere' });
            res.end();
            return;
          }
          res.writeHead(200, { 'x-id': 'abc' });
          res.end('{"ok":true}');
        });
      });
      const client = createProviderHttp({ provider: 'fake', timeoutMs: 300 });
      try {
        const ok = await client.request({
          method: 'POST',
          url: `${s.url}/send?x=1`,
          headers: { 'content-type': 'application/json' },
          body: '{"a":1}',
        });
        expect(ok).toMatchObject({ status: 200, body: '{"ok":true}' });
        expect(ok.headers['x-id']).toBe('abc');
        expect((await client.request({ method: 'GET', url: `${s.url}/redirect`, headers: {} })).status).toBe(302);
        const form = new FormData();
        form.append('to', 'a@x.test');
        form.append('message', new Blob([Buffer.from('MIME')]), 'MimeMessage');
        await client.request({ method: 'POST', url: `${s.url}/mime`, headers: {}, body: { multipart: form } });
        expect(seen.at(-1)).toMatch(
          /^POST \/mime multipart\/form-data; boundary=[\s\S]*name="to"[\s\S]*a@x\.test[\s\S]*filename="MimeMessage"[\s\S]*MIME/,
        );
        const hang = await client.request({ method: 'GET', url: `${s.url}/hang`, headers: {} }).catch((e: unknown) => e);
        expect(hang).toBeInstanceOf(ProviderConnectionError);
        expect(hang).toMatchObject({ kind: 'temporary', reason: 'timeout' });
      } finally {
        await client.close();
        await s.close();
      }
      const refused = createProviderHttp({ provider: 'fake' });
      const e1 = await refused
        .request({ method: 'GET', url: `http://127.0.0.1:${s.port}/`, headers: {} })
        .catch((e: unknown) => e);
      expect(e1).toMatchObject({ kind: 'temporary', reason: 'connect' });
      expect(String((e1 as Error).message)).toMatch(/^fake: .*ECONNREFUSED/);
      expect(verifyFailure(e1).reason).toBe('connect');
      const e2 = await refused
        .request({ method: 'GET', url: 'http://no-such-host.invalid/', headers: {} })
        .catch((e: unknown) => e);
      expect(e2).toMatchObject({ kind: 'service' });
      await refused.close();
    },
  );

  it('Retry-After as seconds or an HTTP-date, clamped to [1 s, 1 h]; describe folds JSON, HTML and text', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryAfterMs({ 'retry-after': '30' }, now)).toBe(30_000);
    expect(retryAfterMs({ 'retry-after': '0' }, now)).toBe(1_000);
    expect(retryAfterMs({ 'retry-after': '86400' }, now)).toBe(3_600_000);
    expect(retryAfterMs({ 'retry-after': 'Wed, 01 Jan 2025 00:02:00 GMT' }, now)).toBe(120_000);
    expect(retryAfterMs({ 'retry-after': 'soon' }, now)).toBeUndefined();
    expect(retryAfterMs({}, now)).toBeUndefined();
    expect(describeAnswer(400, '{"errors":[{"message":"a"},{"message":"b"}]}')).toBe('HTTP 400 a; b');
    expect(describeAnswer(413, '<html><body><h1>413 Request Entity Too Large</h1></body></html>')).toBe(
      'HTTP 413 413 Request Entity Too Large',
    );
    expect(describeAnswer(401, 'Forbidden')).toBe('HTTP 401 Forbidden');
    expect(describeAnswer(500, 'x'.repeat(500))).toHaveLength('HTTP 500 '.length + 200);
    expect(verifyFailure(401).reason).toBe('auth');
    expect(verifyFailure(500).reason).toBe('other');
  });
});
