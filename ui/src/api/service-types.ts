/** Email services as the admin API shows them (src/admin/routes/services.ts, service-test.ts); no DOM, shared with unit tests. */
import { PROVIDER_NAMES, type ProviderName } from '../../../src/providers/index.js';

/** The server's provider registry (src/providers/index.ts), bundled: a new provider shows up here by itself. */
export const PROVIDERS = PROVIDER_NAMES;
export type Provider = ProviderName;

export type BreakerState = 'closed' | 'open' | 'half_open';

/** A service as GET shows it: secrets read "********" when set; a block per provider. */
export interface Service {
  id: string;
  provider: Provider;
  default: boolean;
  from_email?: string;
  from_name?: string;
  max_per_second: number | null;
  bounce_domain?: string;
  complaint_address?: string;
  failover?: string[];
  failover_on_service_error?: boolean;
  events?: Record<string, unknown> & { source: string };
  events_url: string;
  breaker?: { state: BreakerState; opened_at?: string; consecutive_failures: number; last_error?: string };
  version: number;
  created_at: string;
  updated_at: string;
  [block: string]: unknown;
}

export interface ServiceTestResult {
  ok: true;
  latency_ms: number;
  sent?: { to: string; response: string; provider_message_id?: string; latency_ms: number };
}

/** GET …/services/{id}/messages-waiting: a delete is refused (409) while any of these is above 0. */
export interface WaitingMessages {
  queued: number;
  sending: number;
  held: number;
}
