import net from 'node:net';
import type { Server } from 'node:net';

/**
 * HTTP/1.1 spoken by hand over a socket: what `inject()` and fetch cannot show, such as how many
 * bytes the server read before it answered, whether it closed the connection, and what a second
 * request on the same connection gets.
 */

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The envelope's code in a raw response's JSON body. */
export function errorCode(res: RawResponse): string {
  return (JSON.parse(res.body) as { error: { code: string } }).error.code;
}

/**
 * For every connection the server accepts, the bytes it had read from the socket when it wrote
 * its first response byte (a `100 Continue` does not count). Node reads at most 64 KiB at a time,
 * so "one chunk past the limit" is 64 KiB.
 */
export function watchServerReads(server: Server): { readAtAnswer: Array<number | undefined> } {
  const readAtAnswer: Array<number | undefined> = [];
  server.on('connection', (socket: net.Socket) => {
    const index = readAtAnswer.push(undefined) - 1;
    const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
    socket.write = ((...args: unknown[]) => {
      const data = args[0];
      const head =
        typeof data === 'string' ? data.slice(0, 12) : Buffer.isBuffer(data) ? data.subarray(0, 12).toString('latin1') : '';
      if (readAtAnswer[index] === undefined && head !== 'HTTP/1.1 100') readAtAnswer[index] = socket.bytesRead;
      return write(...args);
    }) as typeof socket.write;
  });
  return { readAtAnswer };
}

/** A client connection that reads responses one after another and notices when the server closes. */
export class RawConnection {
  readonly socket: net.Socket;
  /** Everything received, latin1. */
  received = '';
  /** Settles when the server ends or resets the connection. */
  readonly closed: Promise<void>;
  isClosed = false;
  private waiters: Array<() => void> = [];

  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.on('data', (d: Buffer) => {
      this.received += d.toString('latin1');
      this.wake();
    });
    // EPIPE/ECONNRESET while still sending are what a refusing server causes: not test failures.
    this.socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => {
      this.socket.once('close', () => {
        this.isClosed = true;
        this.wake();
        resolve();
      });
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Writes and waits until the kernel took it; false when the connection is gone. */
  async write(data: Buffer | string): Promise<boolean> {
    if (this.isClosed || this.socket.destroyed) return false;
    if (this.socket.write(data)) return true;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
    return !this.isClosed && !this.socket.destroyed;
  }

  /** Whether any response byte has arrived (beyond `100 Continue` lines). */
  answered(): boolean {
    return this.received.replace(/^(HTTP\/1\.1 100 Continue\r\n\r\n)+/, '').length > 0;
  }

  /**
   * The next complete response (Content-Length framed, as all of ours are), or undefined when
   * the connection closed first.
   */
  async nextResponse(): Promise<RawResponse | undefined> {
    for (;;) {
      this.received = this.received.replace(/^(HTTP\/1\.1 100 Continue\r\n\r\n)+/, '');
      const parsed = parseResponse(this.received);
      if (parsed !== undefined) {
        this.received = this.received.slice(parsed.length);
        return parsed.response;
      }
      if (this.isClosed) return undefined;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Settles when more bytes arrive or the connection closes. */
  async activity(): Promise<void> {
    if (this.isClosed) return;
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  destroy(): void {
    this.socket.destroy();
  }
}

function parseResponse(text: string): { response: RawResponse; length: number } | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? '0');
  if (text.length < end + 4 + length) return undefined;
  const body = Buffer.from(text.slice(end + 4, end + 4 + length), 'latin1').toString('utf8');
  return { response: { status: Number(statusLine.split(' ')[1]), headers, body }, length: end + 4 + length };
}

export interface StreamedRequest {
  /** Request line and headers, each line ending in CRLF, without the blank line. */
  head: string;
  /** The first body bytes (form fields, a part header); filler follows. */
  prefix?: Buffer;
  /** Body bytes to send at most: the declared length, or where a chunked body stops. */
  total: number;
  /** Send the body with Transfer-Encoding: chunked (the head must say so). */
  chunked?: boolean;
  /** Wait for `100 Continue` (or an answer) before sending the body. */
  expectContinue?: boolean;
  /**
   * Keep sending after an answer arrives (default: stop), as an HTTP/1.1 client that finishes its
   * request before it reads the response does; only a closed connection stops it.
   */
  sendWhole?: boolean;
}

export const CHUNK = 64 * 1024;

/**
 * Sends one request and streams its body in 64 KiB chunks, as a client uploading a big form
 * would, stopping as soon as the server answers (unless `sendWhole`) or closes. Returns the connection (to read the
 * response and watch it close) and how many body bytes the client handed to its kernel.
 */
export async function streamRequest(port: number, req: StreamedRequest): Promise<{ conn: RawConnection; sent: number }> {
  const conn = new RawConnection(port);
  await new Promise<void>((resolve) => conn.socket.once('connect', () => resolve()));
  await conn.write(`${req.head}\r\n`);
  if (req.expectContinue === true) {
    while (!conn.isClosed && conn.received.length === 0) await conn.activity();
    if (!conn.received.startsWith('HTTP/1.1 100')) return { conn, sent: 0 };
  }
  const filler = Buffer.alloc(CHUNK, 0x41);
  let sent = 0;
  let pending = req.prefix ?? Buffer.alloc(0);
  while (sent < req.total && (req.sendWhole === true || !conn.answered()) && !conn.isClosed) {
    let data: Buffer;
    if (pending.length > 0) {
      data = pending.subarray(0, Math.min(CHUNK, req.total - sent));
      pending = pending.subarray(data.length);
    } else {
      data = filler.subarray(0, Math.min(CHUNK, req.total - sent));
    }
    const framed =
      req.chunked === true ? Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]) : data;
    if (!(await conn.write(framed))) break;
    sent += data.length;
  }
  if (req.chunked === true && sent >= req.total && !conn.isClosed) await conn.write('0\r\n\r\n');
  return { conn, sent };
}

/** A multipart part header for a text field or a file. */
export function partHeader(boundary: string, name: string, filename?: string): string {
  const file = filename === undefined ? '' : `; filename="${filename}"\r\nContent-Type: application/octet-stream`;
  return `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${file}\r\n\r\n`;
}

/** A whole text part. */
export function textPart(boundary: string, name: string, value: string): string {
  return `${partHeader(boundary, name)}${value}\r\n`;
}
