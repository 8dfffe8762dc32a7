import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../domain/clock.js';
import type { ProviderEvent } from '../events/types.js';
import type { Store } from '../storage/store.js';
import type { InboundAddresses, ListenerDeps } from './listener.js';

/**
 * The listener's dependencies over the store: which addresses it accepts (every service's
 * bounce_domain and complaint_address, re-read at most every ADDRESS_TTL_MS so a service added
 * in the admin API is served without a restart), a message's recipients for tokens whose
 * report names none, and a counter of what became of each mail.
 */

const ADDRESS_TTL_MS = 30_000;

export interface InboundWiring {
  secret: string;
  clock: Clock;
  registry: Registry;
  /** recordProviderEvents with scope { orgId: null }: the token's MAC vouches for the message. */
  record(events: ProviderEvent[]): Promise<void>;
  log: ListenerDeps['log'];
}

export async function configuredAddresses(store: Pick<Store, 'organizations' | 'services'>): Promise<InboundAddresses> {
  const domains = new Set<string>();
  const complaintAddresses = new Set<string>();
  for (const org of await store.organizations.list()) {
    for (const service of await store.services.list(org.id)) {
      const { bounce_domain: domain, complaint_address: complaint } = service.settings;
      if (typeof domain === 'string') domains.add(domain.toLowerCase());
      if (typeof complaint === 'string') complaintAddresses.add(complaint.toLowerCase());
    }
  }
  return { domains, complaintAddresses };
}

export function storeInboundDeps(store: Store, wiring: InboundWiring): ListenerDeps {
  const counter = new Counter({
    name: 'mailroom_inbound_reports_total',
    help:
      'Mail received by the inbound SMTP listener, by outcome: recorded, refused (RCPT or ' +
      'size), storage_error, or dropped as auto_reply, not_a_report, no_token, bad_token, no_finding',
    labelNames: ['outcome'] as const,
    registers: [wiring.registry],
  });
  let cached: { at: number; value: Promise<InboundAddresses> } | undefined;
  return {
    secret: wiring.secret,
    now: () => wiring.clock.now(),
    record: wiring.record,
    log: wiring.log,
    counted: (outcome) => counter.inc({ outcome }),
    addresses() {
      const now = wiring.clock.now();
      if (cached === undefined || now - cached.at >= ADDRESS_TTL_MS) {
        const value = configuredAddresses(store);
        cached = { at: now, value };
        // A failed read is not kept: the next RCPT tries again.
        value.catch(() => {
          if (cached?.value === value) cached = undefined;
        });
      }
      return cached.value;
    },
    async recipientsOf(messageId) {
      const rows = await store.messages.recipientsOf({ id: messageId, status: 'sent' });
      return rows.length === 0 ? undefined : rows.map((r) => r.address.toLowerCase());
    },
  };
}
