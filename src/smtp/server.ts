import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerOptions } from 'smtp-server';

/**
 * What the two SMTP listeners of `mailroom serve` share (the inbound MX for bounces,
 * src/inbound/listener.ts, and the submission MSA, src/submission): the server's common
 * options, its error handling, listen and close, our reply errors, and reading DATA within a
 * byte limit. Each listener keeps only its own hooks. No HTTP here.
 */

/** What a closing server (SIGTERM) gives open sessions before it cuts them, ms: inside serve's 10 s grace. */
const CLOSE_TIMEOUT_MS = 5_000;

export interface SmtpLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** What smtp-server's callbacks take: `responseCode` chooses the reply's code, the message is its text. */
export type SmtpError = Error & { responseCode: number };

export function smtpError(code: number, message: string): SmtpError {
  return Object.assign(new Error(message), { responseCode: code });
}

/**
 * An SMTPServer with the options both listeners want (no library logging, no reverse DNS, 5 s
 * to close) over `options`. A client's reset, a failed TLS handshake or a socket error must
 * never end the process: smtp-server emits them on the server, and they are logged as `label`.
 */
export function createSmtpServer(options: SMTPServerOptions, log: SmtpLog, label: string): SMTPServer {
  const server = new SMTPServer({ logger: false, disableReverseLookup: true, closeTimeout: CLOSE_TIMEOUT_MS, ...options });
  server.on('error', (error: Error) =>
    log.warn({ err: error.message, code: (error as { code?: unknown }).code }, `${label} connection error`),
  );
  return server;
}

export interface SmtpListening {
  /** The port bound (the one asked for, or the system's choice for 0). */
  port: number;
  /** Stops accepting; open sessions get CLOSE_TIMEOUT_MS, then are cut. */
  close(): Promise<void>;
}

/** Listens; a failure to bind (port taken) rejects instead of reaching the error handler. */
export async function listenSmtp(server: SMTPServer, port: number, host: string): Promise<SmtpListening> {
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const address = server.server.address();
  return {
    port: address !== null && typeof address === 'object' ? (address satisfies AddressInfo).port : port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface BoundedBody {
  /** Keeps the chunk while the total stays within the limit; past it, keeps nothing at all. */
  add(chunk: Buffer): void;
  /** Bytes held now (at most the limit). */
  readonly kept: number;
  readonly exceeded: boolean;
  body(): Buffer;
}

/**
 * A message's bytes, at most `limit` of them. smtp-server's `size` option only flags the
 * stream and keeps emitting data, so without this a sender could make us hold gigabytes per
 * connection. Once past the limit, what was kept is let go too: the message will be refused
 * whatever it holds, and the rest of the DATA is read and dropped so the dialogue ends on 552.
 */
export function boundedBody(limit: number): BoundedBody {
  let chunks: Buffer[] = [];
  let kept = 0;
  let exceeded = false;
  return {
    add(chunk) {
      if (exceeded) return;
      if (kept + chunk.length > limit) {
        exceeded = true;
        chunks = [];
        kept = 0;
        return;
      }
      chunks.push(chunk);
      kept += chunk.length;
    },
    get kept() {
      return kept;
    },
    get exceeded() {
      return exceeded;
    },
    body: () => Buffer.concat(chunks, kept),
  };
}

/**
 * The DATA of one message, at most `limit` bytes held (boundedBody): its bytes, or 'too_big'
 * when it went past the limit (or past the server's `size`). Rejects when the stream fails (the
 * client cut the connection mid-DATA); settles once either way. `onBytesKept` sees the bytes
 * held after each chunk (tests check the bound).
 */
export function readMessage(
  stream: SMTPServerDataStream,
  limit: number,
  onBytesKept?: (bytes: number) => void,
): Promise<Buffer | 'too_big'> {
  const collected = boundedBody(limit);
  return new Promise((resolve, reject) => {
    stream.on('data', (chunk: Buffer) => {
      collected.add(chunk);
      onBytesKept?.(collected.kept);
    });
    stream.once('error', reject);
    stream.once('end', () => resolve(collected.exceeded || stream.sizeExceeded ? 'too_big' : collected.body()));
  });
}
