import type { Service } from '../domain/types.js';
import { brokenTransport, type Transport, type TransportFactory } from './transport.js';
import { TRANSPORTS } from './transports/index.js';
import { TransportThread } from './transports/thread.js';

/**
 * One open transport per service, so pooled connections last across batches. Built from
 * `inline` factories when given (tests inject fakes), else from the built-in transports in a
 * thread of their own (TransportThread), started on first use.
 */
export class TransportCache {
  private readonly open = new Map<string, { fingerprint: string; transport: Transport }>();
  /** Computed once per Service object: a batch shares one per service, a message asks once. */
  private readonly fingerprints = new WeakMap<Service, string>();
  private thread: TransportThread | undefined;

  constructor(private readonly dataDir: string, private readonly inline?: Readonly<Record<string, TransportFactory>>) {}

  /**
   * The open transport of this service, rebuilt when what it was built from changed; undefined
   * for a provider nobody knows. Keyed on the provider and settings themselves, not on
   * `version`: a service deleted and created again under its id starts at version 1 again, and
   * would have kept the old one's host and credentials. A change that leaves them as they were
   * (a new `max_per_second`) keeps the pooled connections.
   */
  forService(service: Service): Transport | undefined {
    const key = `${service.org_id}/${service.id}`;
    const fingerprint = this.fingerprintOf(service);
    const cached = this.open.get(key);
    if (cached !== undefined && cached.fingerprint === fingerprint) return cached.transport;
    const factory = this.factories()[service.provider];
    if (factory === undefined) return undefined;
    if (cached !== undefined) void cached.transport.close().catch(() => undefined);
    let transport: Transport;
    try {
      transport = factory(service, { dataDir: this.dataDir });
    } catch (error) {
      transport = brokenTransport(service, error);
    }
    this.open.set(key, { fingerprint, transport });
    return transport;
  }

  /** Closes every transport (their pooled connections), then the thread. */
  async close(): Promise<void> {
    const open = [...this.open.values()];
    this.open.clear();
    if (this.thread !== undefined) {
      // The thread's own shutdown closes all of them, within its time limit: asking each one
      // first would wait without a limit on a thread that no longer answers.
      await this.thread.close();
      this.thread = undefined;
      return;
    }
    await Promise.all(open.map((t) => t.transport.close().catch(() => undefined)));
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
