/** GET /admin/v1/organizations/{org}/overview (issue 15 contract). Shapes generated (./shapes.ts). */
import { api, orgPath } from './client';
import { allOf, type Answer, type Query } from './shapes.js';

type OverviewRoute = '/organizations/{org}/overview';

/** `credits.balance` null = unlimited. */
export type Overview = Answer<OverviewRoute, 'get'>;
export type OverviewDays = Query<OverviewRoute, 'get'>['days'];
export const OVERVIEW_DAYS = allOf<OverviewDays>()([7, 30, 90]);

export const overviewApi = {
  get: (org: string, days: OverviewDays, mode: Overview['mode']) => api.get<Overview>(orgPath(org, 'overview'), { days, mode }),
};
