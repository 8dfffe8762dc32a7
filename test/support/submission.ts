import net from 'node:net';
import tls from 'node:tls';
import { buildServices } from '../../src/cli/runtime.js';
import type { Config } from '../../src/config/env.js';
import type { ManualClock } from '../../src/domain/clock.js';
import { SignInLimiter } from '../../src/protection/sign-in-limiter.js';
import { createSendDeps, type SendDeps } from '../../src/send/accept.js';
import type { Store } from '../../src/storage/store.js';
import { startSubmissionListener, type SubmissionListener, type TlsPair } from '../../src/submission/listener.js';
import type { SubmissionPipeline } from '../../src/submission/transaction.js';
import { testConfig } from './app.js';
import type { Closer } from './cleanup.js';

/** A pipeline that accepts everything without storing (for tests of AUTH, TLS, EHLO and replies). */
export function stubPipeline(maxSize = 1_000_000): SubmissionPipeline & { accepted: Buffer[] } {
  const accepted: Buffer[] = [];
  return {
    accepted,
    accept: async (_deps, s) => {
      accepted.push(s.mime);
      return { messageId: `msg_stub${accepted.length}`, status: 'queued', replayed: false };
    },
    checkRecipient: async () => undefined,
    sizeLimit: () => maxSize,
    maxSize,
  };
}

export interface SubmissionSetup {
  store: Store;
  clock: ManualClock;
  closer: Closer;
  pipeline: SubmissionPipeline;
  env?: Record<string, string>;
  tls?: TlsPair;
  tlsPort?: boolean;
  signIns?: SignInLimiter;
  onBytesKept?: (bytes: number) => void;
}

export interface StartedSubmission {
  listener: SubmissionListener;
  sendDeps: SendDeps;
  signIns: SignInLimiter;
  config: Config;
  warnings: object[];
}

/**
 * The real listener on 127.0.0.1, port 0, over the test's store, as `mailroom serve` wires it (the
 * pipeline passed in: a stub, or SEND_PIPELINE).
 */
export async function startSubmissionFor(s: SubmissionSetup): Promise<StartedSubmission> {
  const config = testConfig({ MAILROOM_SUBMISSION_PORT: '0', ...s.env });
  const services = buildServices(config, { store: s.store, clock: s.clock });
  s.closer.defer(() => services.close());
  const sendDeps = createSendDeps({ ...services, config, blobs: services.blobs.blobs, onAccepted: undefined });
  const signIns = s.signIns ?? new SignInLimiter(s.clock);
  const warnings: object[] = [];
  const log = { info: () => undefined, warn: (o: object) => warnings.push(o), error: (o: object) => warnings.push(o) };
  const listener = await startSubmissionListener(
    { sendDeps, signIns, pipeline: s.pipeline, log },
    {
      port: 0,
      host: '127.0.0.1',
      tlsPort: s.tlsPort === true ? 0 : undefined,
      tls: s.tls,
      allowInsecureAuth: config.env === 'development' || config.submission?.allowInsecure === true,
      maxClients: config.submission?.maxClients ?? 20,
      idleMs: config.submission?.idleMs ?? 60_000,
      name: 'mailroom.test',
      onBytesKept: s.onBytesKept,
    },
  );
  s.closer.defer(() => listener.close());
  return { listener, sendDeps, signIns, config, warnings };
}

/** A raw SMTP dialogue: every reply as the lines the server wrote. */
export interface Dialogue {
  greeting: string[];
  /** Sends one command line and resolves with its whole reply (multi-line until `NNN `). */
  command(line: string): Promise<string[]>;
  /** Writes bytes without waiting for a reply (a DATA body). */
  write(data: string | Buffer): void;
  /** Reads the next reply. */
  reply(): Promise<string[]>;
  /** STARTTLS, then the handshake with `ca`; later commands go over TLS. */
  startTls(ca: string): Promise<string[]>;
  /** Every reply line seen so far. */
  lines: string[];
  close(): void;
}

export async function dialogue(port: number, closer: Closer, options: { implicitTls?: { ca: string } } = {}): Promise<Dialogue> {
  let socket: net.Socket =
    options.implicitTls === undefined
      ? net.connect(port, '127.0.0.1')
      : tls.connect({ port, host: '127.0.0.1', ca: options.implicitTls.ca, servername: 'localhost' });
  closer.defer(() => socket.destroy());
  let buffer = '';
  const lines: string[] = [];
  const waiting: Array<(reply: string[]) => void> = [];
  let current: string[] = [];
  const onData = (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let nl = buffer.indexOf('\r\n');
    while (nl !== -1) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 2);
      lines.push(line);
      current.push(line);
      if (/^\d{3} /.test(line) || /^\d{3}$/.test(line)) {
        const done = current;
        current = [];
        pending.push(done);
        flush();
      }
      nl = buffer.indexOf('\r\n');
    }
  };
  const pending: string[][] = [];
  const flush = () => {
    while (pending.length > 0 && waiting.length > 0) waiting.shift()?.(pending.shift() ?? []);
  };
  socket.on('data', onData);
  socket.on('error', () => undefined);
  const reply = () =>
    new Promise<string[]>((resolve) => {
      waiting.push(resolve);
      flush();
    });
  const greeting = await reply();
  const command = (line: string) => {
    socket.write(`${line}\r\n`);
    return reply();
  };
  return {
    greeting,
    command,
    write: (data) => socket.write(data),
    reply,
    lines,
    startTls: async (ca) => {
      const answer = await command('STARTTLS');
      socket.off('data', onData);
      const upgraded = tls.connect({ socket, ca, servername: 'localhost' });
      await new Promise<void>((resolve, reject) => {
        upgraded.once('secureConnect', resolve);
        upgraded.once('error', reject);
      });
      upgraded.on('data', onData);
      upgraded.on('error', () => undefined);
      socket = upgraded;
      closer.defer(() => upgraded.destroy());
      return answer;
    },
    close: () => socket.destroy(),
  };
}

/** AUTH PLAIN's initial response: base64 of NUL username NUL password. */
export const plain = (user: string, pass: string): string => Buffer.from(`\0${user}\0${pass}`).toString('base64');
export const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** A reply line with exactly one enhanced status code of ours (RFC 3463) after the code. */
export const ONE_ENHANCED = /^\d{3}[ -][245]\.\d{1,3}\.\d{1,3} (?![245]\.\d{1,3}\.\d{1,3} )/;
