/** Email services in the admin API (src/admin/routes/services.ts, service-test.ts). */
import { api, orgPath } from './client';

export const PROVIDERS = ['smtp', 'outbox', 'ses', 'postmark', 'sendgrid', 'mailgun', 'resend'] as const;
export type Provider = (typeof PROVIDERS)[number];

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

export const servicesApi = {
  list: (org: string) => api.get<{ items: Service[] }>(orgPath(org, 'services')),
  get: (org: string, id: string) => api.get<Service>(orgPath(org, 'services', id)),
  create: (org: string, id: string, body: Record<string, unknown>) => api.put<Service>(orgPath(org, 'services', id), body),
  update: (org: string, id: string, body: Record<string, unknown>) => api.patch<Service>(orgPath(org, 'services', id), body),
  remove: (org: string, id: string) => api.delete(orgPath(org, 'services', id)),
  test: (org: string, id: string, to?: string) => api.post<ServiceTestResult>(orgPath(org, 'services', id, 'test'), to === undefined || to === '' ? {} : { to }),
  rotateEventsToken: (org: string, id: string) => api.post<Service>(orgPath(org, 'services', id, 'events-token', 'rotate')),
};
