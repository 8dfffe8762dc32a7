/** Organizations and credits in the admin API (src/admin/routes/organizations.ts, credits.ts). */
import { api, orgPath } from './client.js';
import type { Organization, OrganizationPatch, OrganizationSettings, TopUpResult } from './organization-types.js';
import type { Answer } from './shapes.js';

export * from './organization-types.js';

export const organizationsApi = {
  list: () => api.get<Answer<'/organizations', 'get'>>('/organizations'),
  get: (org: string) => api.get<Organization>(orgPath(org)),
  create: (org: string, body: OrganizationSettings) => api.put<Organization>(orgPath(org), body),
  update: (org: string, body: OrganizationPatch) => api.patch<Organization>(orgPath(org), body),
  topUp: (org: string, amount: number) => api.post<TopUpResult>(orgPath(org, 'credits'), { amount }),
};
