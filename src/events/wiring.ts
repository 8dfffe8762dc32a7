import { countProviderEvents } from '../observability/metrics.js';
import type { Store } from '../storage/store.js';
import type { IntakeDeps } from './intake.js';
import { recordProviderEvents, type RecordDeps } from './record.js';
import { webhookSources } from './sources/index.js';

/**
 * The provider event intake assembled over the store, next to the events room as
 * inbound/wiring.ts is for the bounce listener: services found by their events token, each
 * source's verifier (single-use signature tokens claimed in the database, SNS certificates
 * from the allowed hosts), and events recorded for the service's organization only. The HTTP
 * route (http/routes/provider-events.ts) only reads the request and answers.
 */

export interface IntakeWiring extends RecordDeps {
  store: Store;
  /** Config.snsCertHosts: where SES (SNS) signing certificates may come from. */
  snsCertHosts: readonly string[];
}

/** Everything the intake needs but the per-request warn line (the route's request logger). */
export function storeIntakeDeps(wiring: IntakeWiring): Omit<IntakeDeps, 'warn'> {
  const { store, snsCertHosts, ...recordDeps } = wiring;
  const { clock } = recordDeps;
  return {
    findService: (token) => store.services.findByEventsToken(token),
    sources: webhookSources({
      claimToken: (source, token, expiresAt) => store.webhookTokens.claim(source, token, expiresAt, clock.now()),
      snsCertHosts,
    }),
    // A webhook names its service, and so its organization: only that one's messages can match.
    record: (service, events) =>
      recordProviderEvents(store, recordDeps, { orgId: service.org_id, serviceId: service.id }, events),
    countRejected: (source) => countProviderEvents(recordDeps.metrics, source, 'rejected'),
    now: () => clock.now(),
  };
}
