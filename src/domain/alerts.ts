/**
 * Alerts (issue 29): per organization, a threshold on the bounce rate or the complaint rate of
 * its recent live mail, a service's circuit breaker opening, or a webhook endpoint disabled by
 * the dispatcher. Each fires once when it crosses (a state row per organization, kind and
 * subject: src/storage/alerts.ts) and resolves once when it is back under; both are sent as the
 * webhook event `alert.<kind>` with `data.state` firing | resolved, and kept as alert events for
 * the overview.
 */

export const ALERT_KINDS = ['bounce_rate', 'complaint_rate', 'breaker_open', 'endpoint_disabled'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

export const ALERT_EVENT_TYPES = ALERT_KINDS.map((k) => `alert.${k}` as const);

export type AlertState = 'firing' | 'resolved';

/** An organization's alert settings; a rate threshold of null turns that alert off. */
export interface AlertSettings {
  /** Percent of handed-off messages that bounced, e.g. 5. */
  bounce_rate_percent: number | null;
  /** Percent of handed-off messages complained about, e.g. 0.1. */
  complaint_rate_percent: number | null;
  /** Rate alerts fire only over at least this many handed-off messages in the window. */
  min_sample: number;
  /** The rolling window the rates are counted over, in hours (messages created in it). */
  window_hours: number;
  breaker_open: boolean;
  endpoint_disabled: boolean;
}

/**
 * Amazon SES's own marks: an account is put under review at a 5 % bounce rate and at a 0.1 %
 * complaint rate. 100 messages: below that one bounce is already 1 %, noise rather than a trend.
 * 24 h: the window SES and the big mailbox providers report rates over.
 */
export const DEFAULT_ALERT_SETTINGS: Readonly<AlertSettings> = Object.freeze({
  bounce_rate_percent: 5,
  complaint_rate_percent: 0.1,
  min_sample: 100,
  window_hours: 24,
  breaker_open: true,
  endpoint_disabled: true,
});

/**
 * At most 3 days: the check counts the window's rows of an index every minute, per organization;
 * at 330,000 messages a day (issue 16's scale) three days are ~1 M index entries a minute.
 */
export const MAX_ALERT_WINDOW_HOURS = 72;

/** What a rate alert measured: `count` of `sample` handed-off messages, as a percent. */
export interface RateMeasure {
  percent: number;
  threshold_percent: number;
  count: number;
  sample: number;
  window_hours: number;
}

/** An alert event's details: the rate for rate alerts, the reason for the others. */
export interface AlertDetail {
  rate?: RateMeasure;
  service_id?: string;
  endpoint_id?: string;
  reason?: string;
}

export interface AlertEvent {
  /** `alrt_<n>` in the API; the number here. */
  id: number;
  org_id: string;
  kind: AlertKind;
  /** The service (breaker_open) or endpoint (endpoint_disabled); '' for rate alerts. */
  subject: string;
  state: AlertState;
  at: number;
  detail: AlertDetail;
}

/** An alert firing now: its state row. */
export interface OpenAlert {
  org_id: string;
  kind: AlertKind;
  subject: string;
  since: number;
  /** The firing event's id. */
  event_id: number;
  detail: AlertDetail;
}

/** Rate as a percent, two decimals (0.1 % needs them); 0 for an empty sample. */
export function percentOf(count: number, sample: number): number {
  return sample === 0 ? 0 : Math.round((count / sample) * 10_000) / 100;
}
