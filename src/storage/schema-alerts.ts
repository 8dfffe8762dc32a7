import type { Generated } from 'kysely';

// The tables of alerts (issue 29, migration 0022); schema.ts lists them in Database.

export interface AlertSettingsTable {
  org_id: string;
  bounce_rate_percent: number | null;
  complaint_rate_percent: number | null;
  min_sample: number;
  window_hours: number;
  breaker_open: number;
  endpoint_disabled: number;
  updated_at: number;
}

/** One row per alert firing now. */
export interface AlertStatesTable {
  org_id: string;
  kind: string;
  /** The service or endpoint id; '' for rate alerts. */
  subject: string;
  since: number;
  event_id: number;
  /** JSON of AlertDetail. */
  detail: string;
}

export interface AlertEventsTable {
  id: Generated<number>;
  org_id: string;
  kind: string;
  subject: string;
  state: string;
  at: number;
  detail: string;
}
