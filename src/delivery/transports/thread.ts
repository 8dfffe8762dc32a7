import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Service } from '../../domain/types.js';
import {
  DeliveryError,
  type DeliveryErrorOptions,
  type DeliveryReceipt,
  type FailureKind,
  type OutgoingEmail,
  type Refusal,
  type Transport,
  type TransportContext,
  type TransportFactory,
} from '../transport.js';

/** What the main side asks of the thread. */
export type ToThread =
  | { op: 'open'; handle: number; service: Service; context: TransportContext }
  | { op: 'send'; id: number; handle: number; mail: OutgoingEmail }
  | { op: 'close'; id: number; handle: number }
  | { op: 'shutdown'; id: number };

/**
 * A failed send as it crosses the thread: a DeliveryError's fields, `kind` undefined for any
 * other error. `options` (Retry-After, throttling) is a plain object of numbers and booleans,
 * so structured clone carries it as it is.
 */
export interface ThreadError {
  kind: FailureKind | undefined;
  message: string;
  recipients: string[];
  refused?: Refusal[];
  options?: DeliveryErrorOptions;
}

/** Its answers; a failed send carries what the worker needs to classify it. */
export type FromThread = { id: number; ok: true; receipt?: DeliveryReceipt } | { id: number; ok: false; error: ThreadError };

/** The thread's side: what of an error is posted back (a class instance would arrive as a plain Error). */
export function toThreadError(error: unknown): ThreadError {
  if (!(error instanceof DeliveryError))
    return { kind: undefined, message: error instanceof Error ? error.message : String(error), recipients: [] };
  // Only the known fields: an options object holding anything else would fail to clone.
  const options: DeliveryErrorOptions = {
    ...(error.options.retryAfterMs !== undefined ? { retryAfterMs: error.options.retryAfterMs } : {}),
    ...(error.options.throttled !== undefined ? { throttled: error.options.throttled } : {}),
  };
  return { kind: error.kind, message: error.message, recipients: error.recipients, refused: error.refused, options };
}

/**
 * The main side: the same DeliveryError again; not a DeliveryError in the thread (a bug, a disk
 * error): a plain Error, which the worker retries.
 */
export function fromThreadError(error: ThreadError): Error {
  const { kind, message, recipients, refused, options } = error;
  return kind === undefined ? new Error(message) : new DeliveryError(kind, message, recipients, refused ?? [], options ?? {});
}

/** How long a stop waits for the thread to close its connections before ending it anyway. */
const SHUTDOWN_MS = 5_000;

/**
 * The thread's V8 heap. Left to V8's defaults it took a 32 MB young generation and let its old
 * generation grow to ~4x what it kept alive (V8 scales that headroom with the heap limit, ~4 GB
 * here): 69 MB after 3,000 sends over 300 SMTP services, 98 MB after 6,000. A 12 MB young
 * generation (4 MB semi-spaces) and a 512 MB old-generation limit (V8 then grows the heap by at
 * most ~1.4x) keep it small; the limit is far above what the thread keeps alive, and a thread
 * that reached it would end and its sends be retried, as after any crash of the thread.
 */
export const TRANSPORT_THREAD_LIMITS = { maxYoungGenerationSizeMb: 12, maxOldGenerationSizeMb: 512 } as const;

/**
 * The thread runs compiled JavaScript. Run from the TypeScript sources (vitest), this module
 * points at its compiled twin under dist/, which `npm test` builds first.
 */
function hostFile(): string {
  const here = fileURLToPath(import.meta.url);
  const file = here.endsWith('.ts')
    ? fileURLToPath(new URL('../../../dist/src/delivery/transports/thread-host.js', import.meta.url))
    : fileURLToPath(new URL('./thread-host.js', import.meta.url));
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first`);
  return file;
}

/**
 * The built-in transports, run in a worker thread of their own. Composing MIME and speaking
 * SMTP is the heaviest per-message work mailroom does (~600 µs of CPU per email through
 * nodemailer here, against ~150 µs for the queue's own bookkeeping), and on the event loop it
 * competed with the API and the worker's SQL: in the thread it runs on another core, and the
 * event loop only posts each email and reads back its outcome (~10 µs each way).
 *
 * `factories` are TransportFactory proxies with the same names as TRANSPORTS. If the thread
 * dies, every send under way fails as a temporary error (the message is retried later), and
 * the next send starts a new thread and reopens every open transport in it.
 */
export class TransportThread {
  private worker: Worker | undefined;
  private nextId = 0;
  private nextHandle = 0;
  private closed = false;
  private readonly pending = new Map<number, { resolve: (m: FromThread) => void; reject: (e: Error) => void }>();
  /** Open transports, to reopen in a new thread after a crash. */
  private readonly open = new Map<number, { service: Service; context: TransportContext }>();
  readonly factories: Readonly<Record<string, TransportFactory>>;

  constructor(
    providers: readonly string[],
    private readonly file: string = hostFile(),
  ) {
    this.factories = Object.fromEntries(
      providers.map((name) => [name, (service: Service, context: TransportContext) => this.openTransport(service, context)]),
    );
  }

  private thread(): Worker {
    if (this.worker !== undefined) return this.worker;
    const worker = new Worker(this.file, { resourceLimits: TRANSPORT_THREAD_LIMITS });
    // The thread keeps the process alive only while a request waits on it (see request).
    worker.unref();
    worker.on('message', (m: FromThread) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (this.pending.size === 0) worker.unref();
      p?.resolve(m);
    });
    worker.on('error', (err) => this.lost(worker, err.message));
    worker.on('exit', (code) => this.lost(worker, `exit code ${code}`));
    this.worker = worker;
    for (const [handle, o] of this.open) worker.postMessage({ op: 'open', handle, ...o } satisfies ToThread);
    return worker;
  }

  /** The thread is gone: whatever it still owed fails, and the next request starts another. */
  private lost(worker: Worker, reason: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    const error = new Error(`the transport thread stopped: ${reason}`);
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }

  private request(make: (id: number) => ToThread): Promise<FromThread> {
    // A send that outlived its worker's stop must not start a thread nobody will end.
    if (this.closed) return Promise.reject(new Error('the transport thread is closed'));
    const id = this.nextId++;
    const worker = this.thread();
    if (this.pending.size === 0) worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage(make(id));
    });
  }

  private openTransport(service: Service, context: TransportContext): Transport {
    const handle = this.nextHandle++;
    this.open.set(handle, { service, context });
    this.worker?.postMessage({ op: 'open', handle, service, context } satisfies ToThread);
    return {
      send: async (mail) => {
        const answer = await this.request((id) => ({ op: 'send', id, handle, mail }));
        if (answer.ok) return answer.receipt ?? { response: '' };
        throw fromThreadError(answer.error);
      },
      close: async () => {
        this.open.delete(handle);
        if (this.worker !== undefined) await this.request((id) => ({ op: 'close', id, handle })).catch(() => undefined);
      },
    };
  }

  /** Closes every transport in the thread (their pooled connections), then ends the thread. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (worker === undefined) {
      this.closed = true;
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.request((id) => ({ op: 'shutdown', id })).catch(() => undefined),
      new Promise((r) => {
        timer = setTimeout(r, SHUTDOWN_MS);
      }),
    ]);
    clearTimeout(timer);
    this.closed = true;
    this.open.clear();
    await worker.terminate();
    this.lost(worker, 'closed');
  }
}
