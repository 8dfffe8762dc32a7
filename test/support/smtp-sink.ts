import net from 'node:net';
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import type { Clock } from '../../src/domain/clock.js';
import type { Closer } from './cleanup.js';

/**
 * The SMTP sink: a real smtp-server on loopback that answers 4xx/5xx on demand, for the delivery,
 * CLI and browser tests; and what reads what it received.
 */

/** An SMTP reply error as smtp-server sends it: `<code> <message>`. */
export function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

export interface Received {
  raw: Buffer;
  messageId: string | undefined;
  mailFrom: string;
  rcptTo: string[];
  user: string | undefined;
  /** The sink's clock when the message was received (ManualClock time in most tests). */
  at: number;
}

export interface SinkBehaviour {
  /** Called for every MAIL FROM; `n` counts them (1 = first). Return an error to refuse. */
  mailFrom?: (address: string, n: number) => Error | undefined;
  /** Called for every RCPT TO; `n` counts RCPT commands for this address (1 = first). Return an error to refuse. */
  rcpt?: (address: string, n: number) => Error | undefined;
  /** Called after the whole DATA arrived; `n` counts DATA commands (1 = first). Return an error to refuse. */
  data?: (raw: Buffer, n: number) => Error | undefined;
  /** Delay before the DATA reply (a slow relay). */
  dataDelayMs?: number;
}

export interface SinkOptions extends SinkBehaviour {
  /** Listen on this port (default: any free one). */
  port?: number;
  /** Require AUTH: only these credentials pass. */
  auth?: { user: string; pass: string };
  clock?: Clock;
  /** Offer STARTTLS, with smtp-server's built-in certificate (self-signed, and expired). */
  starttls?: boolean;
}

export interface Sink {
  port: number;
  /** Messages the sink accepted (250 to DATA), in order. */
  received: Received[];
  /** Every DATA payload, accepted or refused. */
  dataAttempts: Buffer[];
  /** Every RCPT TO address, accepted or refused. */
  rcptAttempts: string[];
  authAttempts: Array<{ user: string; ok: boolean }>;
  /** TCP connections the sink has seen. */
  connections: number;
  behaviour: SinkBehaviour;
  parse(i: number): Promise<ParsedMail>;
  close(): Promise<void>;
}

export function messageIdOf(raw: Buffer | string): string | undefined {
  return /^Message-ID:[ \t]*(<[^>\r\n]+>)/im.exec(raw.toString('utf8'))?.[1];
}

export async function startSink(options: SinkOptions = {}, closer?: Closer): Promise<Sink> {
  const clock = options.clock ?? { now: () => Date.now() };
  const rcptCounts = new Map<string, number>();
  let dataCount = 0;
  let mailFromCount = 0;
  const sink: Sink = {
    port: 0,
    received: [],
    dataAttempts: [],
    rcptAttempts: [],
    authAttempts: [],
    connections: 0,
    behaviour: {
      ...(options.mailFrom ? { mailFrom: options.mailFrom } : {}),
      ...(options.rcpt ? { rcpt: options.rcpt } : {}),
      ...(options.data ? { data: options.data } : {}),
      ...(options.dataDelayMs !== undefined ? { dataDelayMs: options.dataDelayMs } : {}),
    },
    parse: async (i) => {
      const r = sink.received[i];
      if (r === undefined) throw new Error(`the sink received no message #${i} (got ${sink.received.length})`);
      return simpleParser(r.raw);
    },
    close: async () => undefined,
  };
  const serverOptions: SMTPServerOptions = {
    logger: false,
    ...(options.starttls === true ? {} : { disabledCommands: ['STARTTLS'] }),
    disableReverseLookup: true,
    closeTimeout: 200,
    authOptional: options.auth === undefined,
    ...(options.auth !== undefined ? { allowInsecureAuth: true } : {}),
    onConnect(_session, callback) {
      sink.connections += 1;
      callback();
    },
    onAuth(auth, _session, callback) {
      const wanted = options.auth;
      const ok = wanted !== undefined && auth.username === wanted.user && auth.password === wanted.pass;
      sink.authAttempts.push({ user: auth.username ?? '', ok });
      if (ok) callback(null, { user: auth.username });
      else callback(smtpError(535, '5.7.8 Authentication credentials invalid'));
    },
    onMailFrom(address, _session, callback) {
      mailFromCount += 1;
      callback(sink.behaviour.mailFrom?.(address.address, mailFromCount) ?? null);
    },
    onRcptTo(address, _session, callback) {
      const n = (rcptCounts.get(address.address) ?? 0) + 1;
      rcptCounts.set(address.address, n);
      sink.rcptAttempts.push(address.address);
      callback(sink.behaviour.rcpt?.(address.address, n) ?? null);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        dataCount += 1;
        sink.dataAttempts.push(raw);
        const refusal = sink.behaviour.data?.(raw, dataCount);
        if (refusal === undefined) {
          sink.received.push({
            raw,
            messageId: messageIdOf(raw),
            mailFrom: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
            rcptTo: session.envelope.rcptTo.map((a) => a.address),
            user: typeof session.user === 'string' ? session.user : undefined,
            at: clock.now(),
          });
        }
        const delay = sink.behaviour.dataDelayMs ?? 0;
        if (delay > 0) setTimeout(() => callback(refusal ?? null), delay);
        else callback(refusal ?? null);
      });
    },
  };
  const server = new SMTPServer(serverOptions);
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  sink.port = (server.server.address() as net.AddressInfo).port;
  let closed = false;
  sink.close = () => {
    if (closed) return Promise.resolve();
    closed = true;
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  closer?.defer(() => sink.close());
  return sink;
}

/** A port nothing listens on (for "connection refused"). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Polls `check` until it is true; fails after `timeoutMs`. For real-time peers only, never for retry times. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Names and addresses of a parsed header (To, Cc, Reply-To…) of a received message. */
export function addresses(a: AddressObject | AddressObject[] | undefined): Array<{ name: string; address: string | undefined }> {
  if (a === undefined) return [];
  return (Array.isArray(a) ? a : [a]).flatMap((o) => o.value.map((v) => ({ name: v.name, address: v.address })));
}
