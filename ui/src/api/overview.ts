/** GET /admin/v1/organizations/{org}/overview (issue 15 contract). */
import type { DayCounts } from '../lib/chart';
import { api, orgPath } from './client';
import type { BreakerState } from './services';

export const OVERVIEW_DAYS = [7, 30, 90] as const;
export type OverviewDays = (typeof OVERVIEW_DAYS)[number];

export interface Overview {
  organization_id: string;
  days: number;
  generated_at: string;
  daily: DayCounts[];
  queue: { depth: number; oldest_due_at: string | null; oldest_due_age_seconds: number | null };
  /** balance null = unlimited. */
  credits: { balance: number | null; [more: string]: unknown };
  held_messages: number;
  services: Array<{
    id: string;
    provider: string;
    default: boolean;
    breaker: BreakerState;
    last_error: { at: string; message: string; message_id: string | null } | null;
  }>;
}

export const overviewApi = {
  get: (org: string, days: OverviewDays) => api.get<Overview>(orgPath(org, 'overview'), { days }),
};
