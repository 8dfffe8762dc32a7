import type { AddressInfo } from 'node:net';
import { afterEach, expect, it, vi } from 'vitest';
import { freshApp, type TestApp } from '../support/app.js';
import { PRIVATE_KEY, seedOrg } from '../support/seed.js';
import {
  CHUNK,
  errorCode,
  partHeader,
  streamRequest,
  textPart,
  watchServerReads,
  type RawConnection,
  type StreamedRequest,
} from '../support/raw-http.js';
import { describeDialects } from '../support/dialects.js';

const LIMIT = 1024 * 1024;
const BOUNDARY = '----mailroomlimits';
/** Chunked framing (`10000\r\n…\r\n`) and the request head come on top of the body bytes. */
const SLACK = 4096;
const opened: RawConnection[] = [];
const send = async (port: number, req: StreamedRequest) => {
  const out = await streamRequest(port, req);
  opened.push(out.conn);
  return out;
};

describeDialects('body limits, read over real sockets, on %s', (dialect, skip) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    for (const conn of opened.splice(0)) conn.destroy();
    await t?.cleanup();
    t = undefined;
  });

  async function start(env: Record<string, string>, plan: 'pro' | 'starter' | 'free' = 'pro') {
    t = await freshApp(dialect, env);
    await seedOrg(t.store, { plan });
    const reads = watchServerReads(t.app.server);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    // Nothing of the send path may run for a refused body: no key, template or CAPTCHA work.
    const lookups = [vi.spyOn(t.store.catalog, 'keyByValue'), vi.spyOn(t.store.catalog, 'template')];
    return { port, reads, lookups };
  }

  const head = (method: string, url: string, type: string, framing: string, extra = '') =>
    `${method} ${url} HTTP/1.1\r\nHost: mailroom.test\r\nAuthorization: ` +
    `Bearer ${PRIVATE_KEY}\r\nContent-Type: ${type}\r\n${framing}\r\n${extra}`;
  const formType = `multipart/form-data; boundary=${BOUNDARY}`;
  const formPrefix = Buffer.from(textPart(BOUNDARY, 'template_id', 'contact') + partHeader(BOUNDARY, 'big', 'big.bin'));

  it.skipIf(skip)(
    'a declared length over the limit is refused 413 before the body is read, on every route that takes one',
    { timeout: 30_000 },
    async () => {
      const { port, reads, lookups } = await start({ MAILROOM_BODY_LIMIT_BYTES: String(LIMIT) });
      const routes: Array<[string, string, string, Buffer | undefined]> = [
        ['POST', '/v1/send-form', formType, formPrefix],
        ['POST', '/api/v1.0/email/send-form', formType, formPrefix],
        ['POST', '/v1/send', 'application/json', Buffer.from('{"template_id":"contact","template_params":{"message":"')],
        ['POST', '/api/v1.0/email/send', 'application/json', undefined],
        ['POST', '/v1/send-batch', 'application/json', undefined],
        ['POST', '/v1/uploads', 'application/json', undefined],
        ['PUT', '/admin/v1/organizations/acme', 'application/json', undefined],
        ['POST', '/admin/v1/organizations/acme/suppressions/import', 'text/csv', Buffer.from('email,reason\n')],
      ];
      for (const [i, [method, url, type, prefix]] of routes.entries()) {
        const declared = 5 * LIMIT;
        const requestHead = head(method, url, type, `Content-Length: ${declared}`);
        const { conn } = await send(port, { head: requestHead, prefix, total: declared });
        const res = await conn.nextResponse();
        expect(res?.status, url).toBe(413);
        expect(errorCode(res!)).toBe('payload_too_large');
        expect(res?.headers.connection).toBe('close');
        await conn.closed;
        // At most the one chunk that came with the head.
        expect(reads.readAtAnswer[i], url).toBeLessThanOrEqual(requestHead.length + 2 + CHUNK);
      }
      for (const spy of lookups) expect(spy).not.toHaveBeenCalled();
    },
  );

  it.skipIf(skip)('Expect: 100-continue over the limit: 413 at once, the body is never invited', async () => {
    const { port } = await start({ MAILROOM_BODY_LIMIT_BYTES: String(LIMIT) });
    const { conn, sent } = await send(port, {
      head: head('POST', '/v1/send-form', formType, `Content-Length: ${5 * LIMIT}`, 'Expect: 100-continue\r\n'),
      total: 5 * LIMIT,
      expectContinue: true,
    });
    expect(sent).toBe(0);
    const res = await conn.nextResponse();
    expect(res?.status).toBe(413);
    expect(errorCode(res!)).toBe('payload_too_large');
    await conn.closed;
  });

  it.skipIf(skip)(
    'a chunked body is cut off once past the limit: 413, at most one chunk read past it',
    { timeout: 30_000 },
    async () => {
      const { port, reads, lookups } = await start({ MAILROOM_BODY_LIMIT_BYTES: String(LIMIT) });
      const cases: Array<[string, string, Buffer]> = [
        ['/v1/send-form', formType, formPrefix],
        ['/v1/send', 'application/json', Buffer.from('{"template_id":"contact","template_params":{"message":"')],
      ];
      for (const [i, [url, type, prefix]] of cases.entries()) {
        const { conn } = await send(port, {
          head: head('POST', url, type, 'Transfer-Encoding: chunked'),
          prefix,
          total: 5 * LIMIT,
          chunked: true,
        });
        const res = await conn.nextResponse();
        expect(res?.status, url).toBe(413);
        expect(errorCode(res!)).toBe('payload_too_large');
        expect(res?.headers.connection).toBe('close');
        await conn.closed;
        expect(reads.readAtAnswer[i], url).toBeLessThanOrEqual(LIMIT + CHUNK + SLACK);
      }
      // The form's key is peeked for its plan's file allowance; no template was looked up.
      expect(lookups[1]).not.toHaveBeenCalled();
    },
  );

  it.skipIf(skip)(
    'a file over the plan allowance stops being read there: 413 attachment_too_large',
    { timeout: 30_000 },
    async () => {
      // Starter allows 5 MiB per message; the body limit (40 MiB) would take the whole 30 MiB.
      const { port, reads, lookups } = await start({}, 'starter');
      const allowance = 5 * 1024 * 1024;
      for (const [i, framing] of ['Content-Length: 31457280', 'Transfer-Encoding: chunked'].entries()) {
        const chunked = framing.startsWith('Transfer');
        const { conn } = await send(port, {
          head: head('POST', '/v1/send-form', formType, framing),
          prefix: formPrefix,
          total: 30 * 1024 * 1024,
          chunked,
        });
        const res = await conn.nextResponse();
        expect(res?.status, framing).toBe(413);
        expect(errorCode(res!)).toBe('attachment_too_large');
        expect(res?.headers.connection).toBe('close');
        await conn.closed;
        expect(reads.readAtAnswer[i], framing).toBeLessThanOrEqual(formPrefix.length + allowance + CHUNK + SLACK);
      }
      expect(lookups[1]).not.toHaveBeenCalled();
    },
  );

  it.skipIf(skip)('no allowance at all (Free): the first file byte is refused 403, as at acceptance', async () => {
    const { port, lookups } = await start({}, 'free');
    const total = 2 * 1024 * 1024;
    const { conn } = await send(port, {
      head: head('POST', '/v1/send-form', formType, `Content-Length: ${total}`),
      prefix: formPrefix,
      total,
    });
    const res = await conn.nextResponse();
    expect(res?.status).toBe(403);
    expect(JSON.parse(res?.body ?? '{}')).toMatchObject({
      error: { code: 'attachments_not_allowed', details: { reason: 'plan' } },
    });
    expect(lookups[1]).not.toHaveBeenCalled();
  });

  it.skipIf(skip)('a text field over 1 MiB is 413, not silently cut short', async () => {
    const { port } = await start({});
    const prefix = Buffer.from(
      textPart(BOUNDARY, 'template_id', 'contact') +
        textPart(BOUNDARY, 'message', 'm'.repeat(1024 * 1024 + 10)) +
        `--${BOUNDARY}--\r\n`,
    );
    const total = prefix.length;
    const { conn } = await send(port, {
      head: head('POST', '/v1/send-form', formType, `Content-Length: ${total}`),
      prefix,
      total,
    });
    const res = await conn.nextResponse();
    expect(res?.status).toBe(413);
    expect(JSON.parse(res?.body ?? '{}')).toMatchObject({
      error: { code: 'payload_too_large', details: { fields: [{ field: 'message' }] } },
    });
  });
});
