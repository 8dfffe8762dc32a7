import type { AlertDetail, AlertKind, AlertState } from '../domain/alerts.js';

/**
 * The body of an alert event (issue 29), fixed when the alert fires or resolves:
 * ```json
 * {
 *   "type": "alert.bounce_rate",
 *   "timestamp": "2026-01-01T12:00:00.000Z",
 *   "data": {
 *     "alert_id": "alrt_12",
 *     "organization_id": "acme",
 *     "kind": "bounce_rate",
 *     "state": "firing",
 *     "rate": { "percent": 6.2, "threshold_percent": 5, "count": 31, "sample": 500, "window_hours": 24 }
 *   }
 * }
 * ```
 * `state`: `firing` when it crossed, `resolved` when it is back under (the same type, so a
 * subscriber to `alert.bounce_rate` gets both). `alert.breaker_open` has `service_id` and
 * `reason` (the service's last error); `alert.endpoint_disabled` has `endpoint_id` and `reason`.
 * The `webhook-id` is `alert_<n>`, the same at every endpoint and on every retry.
 */
export interface AlertEventPayload {
  type: `alert.${AlertKind}`;
  timestamp: string;
  data: { alert_id: string; organization_id: string; kind: AlertKind; state: AlertState } & AlertDetail;
}

export const alertIdOf = (id: number): string => `alrt_${id}`;

export function alertEventPayload(e: {
  id: number;
  orgId: string;
  kind: AlertKind;
  state: AlertState;
  at: number;
  detail: AlertDetail;
}): string {
  const body: AlertEventPayload = {
    type: `alert.${e.kind}`,
    timestamp: new Date(e.at).toISOString(),
    data: { alert_id: alertIdOf(e.id), organization_id: e.orgId, kind: e.kind, state: e.state, ...e.detail },
  };
  return JSON.stringify(body);
}
