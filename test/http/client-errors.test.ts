import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { freshApp, type TestApp } from '../support/app.js';
import { RawConnection, type RawResponse } from '../support/raw-http.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Requests Node's HTTP parser refuses before Fastify routes them: they get the spec's envelope
 * (not Fastify's `{"error":"Request Header Fields Too Large",…}`), then the connection closes.
 */
describeDialects('requests refused before routing, on %s', (dialect, skip) => {
  let t: TestApp | undefined;
  const opened: RawConnection[] = [];
  afterEach(async () => {
    for (const conn of opened.splice(0)) conn.destroy();
    await t?.cleanup();
    t = undefined;
  });

  async function exchange(raw: string): Promise<{ res: RawResponse | undefined; conn: RawConnection }> {
    if (t === undefined) {
      t = await freshApp(dialect);
      await t.app.listen({ port: 0, host: '127.0.0.1' });
    }
    const conn = new RawConnection((t.app.server.address() as AddressInfo).port);
    opened.push(conn);
    await conn.write(raw);
    const res = await conn.nextResponse();
    await conn.closed;
    return { res, conn };
  }

  function expectEnvelope(res: RawResponse | undefined, status: number, code: string): void {
    expect(res?.status).toBe(status);
    expect(res?.headers['content-type']).toMatch(/^application\/json/);
    expect(res?.headers.connection).toBe('close');
    const body = JSON.parse(res?.body ?? '{}') as { error?: { code: string; message: string; docs_url: string } };
    expect(body.error?.code).toBe(code);
    expect(body.error?.message.length).toBeGreaterThan(0);
    expect(body.error?.docs_url).toBe(`http://mailroom.test/docs/reference/errors/#${code.replaceAll('_', '-')}`);
  }

  it.skipIf(skip)('headers over the size limit: 431 with code bad_request, then the connection closes', async () => {
    const { res, conn } = await exchange(
      `GET /v1/health HTTP/1.1\r\nHost: mailroom.test\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expectEnvelope(res, 431, 'bad_request');
    expect(conn.isClosed).toBe(true);
  });

  it.skipIf(skip)('a malformed request line: 400 bad_request', async () => {
    const { res } = await exchange('HELLO THERE\r\n\r\n');
    expectEnvelope(res, 400, 'bad_request');
  });

  it.skipIf(skip)('contradictory framing (Content-Length with chunked): 400 bad_request', async () => {
    const { res } = await exchange(
      'POST /v1/send HTTP/1.1\r\nHost: mailroom.test\r\nContent-Type: ' +
        'application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    );
    expectEnvelope(res, 400, 'bad_request');
  });

  it.skipIf(skip)('a broken chunk size in a body being read: 400 bad_request', async () => {
    const { res } = await exchange(
      'POST /v1/send HTTP/1.1\r\nHost: mailroom.test\r\nContent-Type: ' +
        'application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
    );
    expectEnvelope(res, 400, 'bad_request');
  });
});
