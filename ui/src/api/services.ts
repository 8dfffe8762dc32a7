/** Email services in the admin API (src/admin/routes/services.ts, service-test.ts). */
import { api, orgPath } from './client.js';
import type { Service, ServiceTestResult } from './service-types.js';

export * from './service-types.js';

export const servicesApi = {
  list: (org: string) => api.get<{ items: Service[] }>(orgPath(org, 'services')),
  get: (org: string, id: string) => api.get<Service>(orgPath(org, 'services', id)),
  create: (org: string, id: string, body: Record<string, unknown>) => api.put<Service>(orgPath(org, 'services', id), body),
  update: (org: string, id: string, body: Record<string, unknown>) => api.patch<Service>(orgPath(org, 'services', id), body),
  remove: (org: string, id: string) => api.delete(orgPath(org, 'services', id)),
  test: (org: string, id: string, to?: string) =>
    api.post<ServiceTestResult>(orgPath(org, 'services', id, 'test'), to === undefined || to === '' ? {} : { to }),
  rotateEventsToken: (org: string, id: string) => api.post<Service>(orgPath(org, 'services', id, 'events-token', 'rotate')),
};
