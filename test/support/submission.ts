import net from 'node:net';
import tls from 'node:tls';
import pino from 'pino';
import { buildServices } from '../../src/cli/runtime.js';
import type { Config } from '../../src/config/env.js';
import type { TlsMaterial } from '../../src/config/tls.js';
import type { Caller } from '../../src/domain/caller.js';
import type { ManualClock } from '../../src/domain/clock.js';
import { SignInLimiter } from '../../src/protection/sign-in-limiter.js';
import { createSendDeps, type SendDeps } from '../../src/send/accept.js';
import { acceptSubmission, type SubmissionAccepted } from '../../src/send/submission.js';
import type { Store } from '../../src/storage/store.js';
import type { SubmissionListener } from '../../src/submission/listener.js';
import type { SubmissionPipeline } from '../../src/submission/transaction.js';
import { startSubmission } from '../../src/submission/wiring.js';
import { testConfig, type TestApp } from './app.js';
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
  /** Default: the send path itself (SEND_PIPELINE), as `mailroom serve` runs it. */
  pipeline?: SubmissionPipeline;
  env?: Record<string, string>;
  /** The certificate as serve reads it (env names the files: MAILROOM_TLS_* or MAILROOM_SUBMISSION_TLS_*). */
  tls?: TlsMaterial;
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

/** SendDeps over the test's store, built as `mailroom serve` builds them (closed with `closer`). */
export function sendDepsFor(config: Config, store: Store, clock: ManualClock, closer: Closer): SendDeps {
  const services = buildServices(config, { store, clock, logger: pino({ level: 'silent' }) });
  closer.defer(() => services.close());
  return createSendDeps({ ...services, metrics: undefined, config, blobs: services.blobs.blobs, onAccepted: undefined });
}

/** Send deps over a test app's store. */
export const depsFor = (t: TestApp, closer: Closer): SendDeps => sendDepsFor(t.config, t.store, t.clock, closer);

/**
 * The listener on 127.0.0.1, port 0, over the test's store, started by `mailroom serve`'s own
 * startSubmission (src/submission/wiring.ts) from the configuration `env` makes: its AUTH-before-TLS
 * rule, limits and name are what a test sees.
 */
export async function startSubmissionFor(s: SubmissionSetup): Promise<StartedSubmission> {
  const config = testConfig({
    MAILROOM_SUBMISSION_PORT: '0',
    MAILROOM_SUBMISSION_HOST: '127.0.0.1',
    ...(s.tlsPort === true ? { MAILROOM_SUBMISSION_TLS_PORT: '0' } : {}),
    ...s.env,
  });
  const sendDeps = sendDepsFor(config, s.store, s.clock, s.closer);
  const signIns = s.signIns ?? new SignInLimiter(s.clock);
  const warnings: object[] = [];
  const log = { warn: (o: object) => warnings.push(o), error: (o: object) => warnings.push(o) };
  const listener = await startSubmission(config, { sendDeps, signIns, log }, s.tls, {
    ...(s.pipeline === undefined ? {} : { pipeline: s.pipeline }),
    ...(s.onBytesKept === undefined ? {} : { onBytesKept: s.onBytesKept }),
  });
  if (listener === undefined) throw new Error('startSubmission started nothing: MAILROOM_SUBMISSION_PORT unset?');
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

// What the send-path submission tests share (issue 28): a caller from a key, and messages written
// as an SMTP client writes them (CRLF).

export const TEST_MODE_KEY = 'sk_test_submission_0001';
export const CLIENT = { ip: '127.0.0.1', origin: undefined, referer: undefined, userAgent: undefined, secChUa: undefined };

export async function callerOf(store: Store, value: string): Promise<Caller> {
  const key = await store.catalog.keyByValue(value);
  if (key === undefined) throw new Error(`no key ${value}`);
  const org = await store.catalog.organization(key.org_id);
  if (org === undefined) throw new Error(`no organization ${key.org_id}`);
  return { org, key };
}

/** Header lines and a body joined with CRLF, as DATA carries them (dot-unstuffed). */
export function message(headers: readonly string[], body = 'Hello from SMTP.\r\n'): Buffer {
  return Buffer.from(`${headers.join('\r\n')}\r\n\r\n${body}`, 'utf8');
}

export const BASIC_HEADERS = [
  'From: App <app@acme.test>',
  'To: Ann <ann@example.com>',
  'Subject: Hello',
  'Date: Thu, 05 Mar 2026 10:00:00 +0000',
  'Message-ID: <first@app.acme.test>',
] as const;

export function submit(
  deps: SendDeps,
  caller: Caller,
  mime: Buffer,
  recipients: readonly string[] = ['ann@example.com'],
): Promise<SubmissionAccepted> {
  return acceptSubmission(deps, { caller, client: CLIENT, recipients, mime });
}

/** The ApiError a promise rejects with: its code, message and details.reason. */
export async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string; reason: unknown }> {
  try {
    await p;
  } catch (err) {
    const e = err as { code?: string; message: string; details?: Record<string, unknown> };
    return { code: e.code ?? 'not an ApiError', message: e.message, reason: e.details?.reason };
  }
  throw new Error('expected a refusal, and it was accepted');
}
