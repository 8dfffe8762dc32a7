/** The calls the template screens make (shapes in ./template-types). */
import { api, orgPath } from './client';
import type { RequestBody } from './shapes.js';
import type {
  RenderResult,
  SendTestResult,
  ServiceSummary,
  TemplateResource,
  TemplateVersion,
  TemplateWrite,
  TemplateWritten,
} from './template-types';

export * from './template-types';

const path = (org: string, ...rest: string[]) => orgPath(org, 'templates', ...rest);

export const templatesApi = {
  list: (org: string) => api.get<{ items: TemplateResource[] }>(path(org)).then((r) => r.items),
  /** The template ids, for a filter's select: best effort (undefined on failure; the filter is then a text field). */
  ids: (org: string): Promise<string[] | undefined> =>
    templatesApi.list(org).then(
      (ts) => ts.map((t) => t.id),
      () => undefined,
    ),
  get: (org: string, id: string) => api.get<TemplateResource>(path(org, id)),
  create: (org: string, id: string, body: TemplateWrite) => api.put<TemplateWritten>(path(org, id), body),
  update: (org: string, id: string, body: TemplateWrite) => api.patch<TemplateWritten>(path(org, id), body),
  render: (org: string, id: string, body: RequestBody<'/organizations/{org}/templates/{id}/render', 'post'>) =>
    api.post<RenderResult>(path(org, id, 'render'), body),
  sendTest: (org: string, id: string, body: RequestBody<'/organizations/{org}/templates/{id}/send-test', 'post'>) =>
    api.post<SendTestResult>(path(org, id, 'send-test'), body),
  versions: (org: string, id: string) => api.get<{ items: TemplateVersion[] }>(path(org, id, 'versions')).then((r) => r.items),
  restore: (org: string, id: string, version: number) =>
    api.post<TemplateWritten>(path(org, id, 'versions', String(version), 'restore')),
  services: (org: string) => api.get<{ items: ServiceSummary[] }>(orgPath(org, 'services')).then((r) => r.items),
};
