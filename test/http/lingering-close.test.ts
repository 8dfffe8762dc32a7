import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { lingerAfterAnswer } from '../../src/errors/lingering-close.js';
import { freshApp, type TestApp } from '../support/app.js';
import { PRIVATE_KEY, seedOrg } from '../support/seed.js';
import { CHUNK, partHeader, textPart } from '../support/raw-http.js';
import { describeDialects } from '../support/dialects.js';

const LIMIT = 1024 * 1024;
const BOUNDARY = '----mailroomlinger';
/** What the client still sends after the server has finished its side: ample to be reset if the server closed. */
const AFTER = 1024 * 1024;

interface Upload {
  /** The first response the client reads once it has finished writing, or undefined when its connection was reset first. */
  answer: { status: number; code: string; connection: string } | undefined;
  /** Body bytes the client wrote after the server had ended its side. */
  sentAfter: number;
}

/**
 * A client that uploads without reading, as a browser busy sending a file does: it writes until
 * the server has answered and ended its side of the connection (the server socket's 'finish'),
 * writes AFTER bytes more, and only then reads. A server that destroys its socket at that point
 * resets the connection, the client's writes fail, and the answer is never read.
 */
async function uploadThenRead(
  server: Server,
  port: number,
  head: string,
  prefix: Buffer,
  total: number,
  chunked = false,
): Promise<Upload> {
  const serverSide = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
  const client = net.connect({ port, host: '127.0.0.1' });
  client.pause();
  client.on('error', () => undefined);
  await new Promise<void>((resolve) => client.once('connect', () => resolve()));
  const socket = await serverSide;
  let serverEnded = false;
  // 'close' too: a server that destroys its socket before the FIN went out never emits 'finish'.
  const ended = new Promise<void>((resolve) => {
    const done = () => {
      serverEnded = true;
      resolve();
    };
    socket.once('finish', done);
    socket.once('close', done);
  });
  const gone = new Promise<void>((resolve) => client.once('close', () => resolve()));
  const write = async (data: Buffer | string, waitFor: Promise<void>[]): Promise<void> => {
    if (client.destroyed || client.write(data)) return;
    await Promise.race([new Promise<void>((resolve) => client.once('drain', () => resolve())), gone, ...waitFor]);
  };
  const frame = (data: Buffer): Buffer =>
    chunked ? Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]) : data;

  await write(`${head}\r\n`, [ended]);
  const filler = Buffer.alloc(CHUNK, 0x41);
  let pending = prefix;
  let sent = 0;
  const next = (): Buffer => {
    const data = pending.length > 0 ? pending.subarray(0, CHUNK) : filler.subarray(0, Math.min(CHUNK, total - sent));
    pending = pending.subarray(Math.min(pending.length, CHUNK));
    sent += data.length;
    return frame(data);
  };
  while (!serverEnded && !client.destroyed && sent < total) await write(next(), [ended]);
  await ended;
  // Node's destroySoon destroys on that same 'finish'; a turn of the loop lets it happen.
  await new Promise((resolve) => setImmediate(resolve));
  const before = sent;
  while (!client.destroyed && sent < total && sent - before < AFTER) await write(next(), []);
  const sentAfter = client.destroyed ? 0 : sent - before;

  let received = '';
  client.on('data', (d: Buffer) => {
    received += d.toString('latin1');
  });
  client.resume();
  await Promise.race([gone, new Promise<void>((resolve) => client.once('end', () => resolve()))]);
  client.destroy();
  const split = received.indexOf('\r\n\r\n');
  if (split < 0) return { answer: undefined, sentAfter };
  const headLines = received.slice(0, split).split('\r\n');
  const connection =
    headLines
      .find((l) => l.toLowerCase().startsWith('connection:'))
      ?.slice(11)
      .trim() ?? '';
  const body = JSON.parse(received.slice(split + 4)) as { error: { code: string } };
  return { answer: { status: Number(headLines[0]?.split(' ')[1]), code: body.error.code, connection }, sentAfter };
}

describeDialects('an early answer with Connection: close reaches a client still uploading, on %s', (dialect, skip) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  async function start(env: Record<string, string>, plan: 'pro' | 'starter' = 'pro'): Promise<{ server: Server; port: number }> {
    t = await freshApp(dialect, env);
    await seedOrg(t.store, { plan });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    return { server: t.app.server, port: (t.app.server.address() as AddressInfo).port };
  }

  const head = (url: string, type: string, framing: string) =>
    `POST ${url} HTTP/1.1\r\nHost: mailroom.test\r\nAuthorization: ` +
    `Bearer ${PRIVATE_KEY}\r\nContent-Type: ${type}\r\n${framing}\r\n`;
  const formType = `multipart/form-data; boundary=${BOUNDARY}`;
  const formPrefix = Buffer.from(textPart(BOUNDARY, 'template_id', 'contact') + partHeader(BOUNDARY, 'big', 'big.bin'));

  it.skipIf(skip)(
    'a declared length over the limit: 413 payload_too_large, read after the upload went on',
    { timeout: 30_000 },
    async () => {
      const { server, port } = await start({ MAILROOM_BODY_LIMIT_BYTES: String(LIMIT) });
      const total = 8 * LIMIT;
      const { answer, sentAfter } = await uploadThenRead(
        server,
        port,
        head('/v1/send-form', formType, `Content-Length: ${total}`),
        formPrefix,
        total,
      );
      expect(answer).toEqual({ status: 413, code: 'payload_too_large', connection: 'close' });
      expect(sentAfter).toBe(AFTER);
    },
  );

  it.skipIf(skip)(
    'a file over the plan allowance (the reader had stopped reading): 413 attachment_too_large',
    { timeout: 30_000 },
    async () => {
      const { server, port } = await start({}, 'starter');
      const total = 12 * 1024 * 1024;
      const { answer, sentAfter } = await uploadThenRead(
        server,
        port,
        head('/v1/send-form', formType, `Content-Length: ${total}`),
        formPrefix,
        total,
      );
      expect(answer).toEqual({ status: 413, code: 'attachment_too_large', connection: 'close' });
      expect(sentAfter).toBe(AFTER);
    },
  );

  it.skipIf(skip)(
    'a chunked JSON body cut off by the parser at the limit: 413 payload_too_large',
    { timeout: 30_000 },
    async () => {
      const { server, port } = await start({ MAILROOM_BODY_LIMIT_BYTES: String(LIMIT) });
      const prefix = Buffer.from('{"template_id":"contact","template_params":{"message":"');
      const { answer, sentAfter } = await uploadThenRead(
        server,
        port,
        head('/v1/send', 'application/json', 'Transfer-Encoding: chunked'),
        prefix,
        8 * LIMIT,
        true,
      );
      expect(answer).toEqual({ status: 413, code: 'payload_too_large', connection: 'close' });
      expect(sentAfter).toBe(AFTER);
    },
  );

  it.skipIf(skip)(
    "a body Node's parser refuses mid-way (a broken chunk size): 400 bad_request",
    { timeout: 30_000 },
    async () => {
      const { server, port } = await start({});
      // The framing is broken from the first chunk on; the client streams on regardless.
      const { answer, sentAfter } = await uploadThenRead(
        server,
        port,
        head('/v1/send', 'application/json', 'Transfer-Encoding: chunked'),
        Buffer.from('zz\r\n'),
        8 * LIMIT,
      );
      expect(answer).toEqual({ status: 400, code: 'bad_request', connection: 'close' });
      expect(sentAfter).toBe(AFTER);
    },
  );
});

describe('lingering is bounded', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });

  it('a client that never stops sending nor closes is cut off once the linger time is over', { timeout: 30_000 }, async () => {
    server = createServer((_req, res) => {
      res.writeHead(413, { connection: 'close', 'content-length': '0' });
      lingerAfterAnswer(res, 200);
      res.end();
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const serverSide = new Promise<net.Socket>((resolve) => server?.once('connection', resolve));
    const client = net.connect({ port: (server.address() as AddressInfo).port, host: '127.0.0.1' });
    client.on('error', () => undefined);
    client.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${1024 * 1024 * 1024}\r\n\r\n`);
    // allowHalfOpen: the client's side stays open after the server's FIN, as a stubborn client's would.
    client.allowHalfOpen = true;
    const socket = await serverSide;
    let serverClosed = false;
    const closed = new Promise<void>((resolve) =>
      socket.once('close', () => {
        serverClosed = true;
        resolve();
      }),
    );
    const filler = Buffer.alloc(CHUNK, 0x41);
    const trickle = setInterval(() => client.write(filler), 20);
    await closed;
    clearInterval(trickle);
    client.destroy();
    expect(serverClosed).toBe(true);
  });
});
