import type { Service } from '../domain/types.js';
import { brokenTransport, type DeliveryReceipt, type OutgoingEmail, type Transport, type TransportFactory } from './transport.js';
import { TRANSPORTS } from './transports/index.js';
import { TransportThread } from './transports/thread.js';

/**
 * One open transport per service, so pooled connections last across batches. Built from
 * `inline` factories when given (tests inject fakes), else from the built-in transports in a
 * thread of their own (TransportThread), started on first use.
 */
export class TransportCache {
  private readonly open = new Map<string, { fingerprint: string; transport: Retirable }>();
  /** Transports replaced while sends were in flight through them: closed once those settle. */
  private readonly retiring = new Set<Retirable>();
  /** Computed once per Service object: a batch shares one per service, a message asks once. */
  private readonly fingerprints = new WeakMap<Service, string>();
  private thread: TransportThread | undefined;

  constructor(
    private readonly dataDir: string,
    private readonly inline?: Readonly<Record<string, TransportFactory>>,
  ) {}

  /**
   * The open transport of this service, rebuilt when what it was built from changed; undefined
   * for a provider nobody knows. Keyed on the provider and settings themselves, not on
   * `version`: a service deleted and created again under its id starts at version 1 again, and
   * would have kept the old one's host and credentials. A change that leaves them as they were
   * (a new `max_per_second`) keeps the pooled connections. The transport it replaces is closed
   * only once the sends in flight through it have settled (see Retirable).
   */
  forService(service: Service): Transport | undefined {
    const key = `${service.org_id}/${service.id}`;
    const fingerprint = this.fingerprintOf(service);
    const cached = this.open.get(key);
    if (cached !== undefined && cached.fingerprint === fingerprint) return cached.transport;
    const factory = this.factories()[service.provider];
    if (factory === undefined) return undefined;
    let built: Transport;
    try {
      built = factory(service, { dataDir: this.dataDir });
    } catch (error) {
      built = brokenTransport(service, error);
    }
    const transport = new Retirable(built);
    if (cached !== undefined) {
      this.retiring.add(cached.transport);
      void cached.transport.retire(transport).finally(() => this.retiring.delete(cached.transport));
    }
    this.open.set(key, { fingerprint, transport });
    return transport;
  }

  /** Closes every transport (their pooled connections), then the thread. */
  async close(): Promise<void> {
    // The worker has stopped sending: transports still retiring close now, as the others do.
    const open = [...this.open.values()].map((e) => e.transport).concat([...this.retiring]);
    this.open.clear();
    this.retiring.clear();
    if (this.thread !== undefined) {
      // The thread's own shutdown closes all of them, within its time limit: asking each one
      // first would wait without a limit on a thread that no longer answers.
      await this.thread.close();
      this.thread = undefined;
      return;
    }
    await Promise.all(open.map((t) => t.close().catch(() => undefined)));
  }

  private factories(): Readonly<Record<string, TransportFactory>> {
    if (this.inline !== undefined) return this.inline;
    this.thread ??= new TransportThread(Object.keys(TRANSPORTS));
    return this.thread.factories;
  }

  private fingerprintOf(service: Service): string {
    let fingerprint = this.fingerprints.get(service);
    if (fingerprint === undefined) {
      fingerprint = JSON.stringify([service.provider, service.settings]);
      this.fingerprints.set(service, fingerprint);
    }
    return fingerprint;
  }
}

/**
 * A cached transport that can be replaced without cutting off its sends. Closing a transport
 * aborts what it is sending (SES's client.destroy() cancels its requests; nodemailer drops its
 * pool's connections), and a send aborted after the provider took the message is retried and
 * delivered twice. So a replaced transport is closed only after its in-flight sends settle, and
 * a send that arrives after the replacement (the worker took the transport before its pacing
 * wait) goes through the replacement, built from the service's current settings.
 */
export class Retirable implements Transport {
  private readonly inFlight = new Set<Promise<unknown>>();
  private successor: Transport | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly inner: Transport) {
    if (inner.verify !== undefined) this.verify = () => inner.verify?.() ?? Promise.resolve();
  }

  verify?: () => Promise<void>;

  send(mail: OutgoingEmail): Promise<DeliveryReceipt> {
    if (this.successor !== undefined) return this.successor.send(mail);
    const sending = this.inner.send(mail);
    const done = () => {
      this.inFlight.delete(sending);
    };
    this.inFlight.add(sending);
    sending.then(done, done);
    return sending;
  }

  /** Sends from now on go to `successor`; the inner transport closes once those in flight settle. */
  async retire(successor: Transport): Promise<void> {
    this.successor = successor;
    await Promise.allSettled([...this.inFlight]);
    await this.close().catch(() => undefined);
  }

  /** Once: the cache's own close may come while it retires. */
  close(): Promise<void> {
    this.closing ??= this.inner.close();
    return this.closing;
  }
}
