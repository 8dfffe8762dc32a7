/** Email services in the admin API (src/admin/routes/services.ts, service-test.ts). */
import { api, orgPath } from './client.js';
import type { Service, ServiceTestResult, WaitingMessages } from './service-types.js';

export * from './service-types.js';

export const servicesApi = {
  list: (org: string) => api.get<{ items: Service[] }>(orgPath(org, 'services')),
  /** The service ids, for a filter's select: best effort, as templatesApi.ids. */
  ids: (org: string): Promise<string[] | undefined> =>
    servicesApi.list(org).then(
      (r) => r.items.map((s) => s.id),
      () => undefined,
    ),
  get: (org: string, id: string) => api.get<Service>(orgPath(org, 'services', id)),
  create: (org: string, id: string, body: Record<string, unknown>) => api.put<Service>(orgPath(org, 'services', id), body),
  update: (org: string, id: string, body: Record<string, unknown>) => api.patch<Service>(orgPath(org, 'services', id), body),
  remove: (org: string, id: string) => api.delete(orgPath(org, 'services', id)),
  test: (org: string, id: string, to?: string) =>
    api.post<ServiceTestResult>(orgPath(org, 'services', id, 'test'), to === undefined || to === '' ? {} : { to }),
  /** The form's settings, unsaved (POST …/services/test); masked secrets are those of the stored `service.id`. */
  testForm: (org: string, service: Record<string, unknown>, to?: string) =>
    api.post<ServiceTestResult>(orgPath(org, 'services', 'test'), to === undefined || to === '' ? { service } : { service, to }),
  /** Messages bound to the service: what a delete waits for. */
  waiting: (org: string, id: string) => api.get<WaitingMessages>(orgPath(org, 'services', id, 'messages-waiting')),
  moveMessages: (org: string, id: string, to: string) =>
    api.post<{ moved: number }>(orgPath(org, 'services', id, 'move-messages'), { to }),
  rotateEventsToken: (org: string, id: string) => api.post<Service>(orgPath(org, 'services', id, 'events-token', 'rotate')),
};
