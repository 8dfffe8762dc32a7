/**
 * Alerts in the admin API (src/admin/routes/alerts.ts, issue 29): an organization's settings, and
 * what fires now with the latest events. Shapes generated (./shapes.ts).
 */
import { api, orgPath } from './client';
import type { Answer, RequestBody } from './shapes.js';

type Settings = '/organizations/{org}/alerts';
type Events = '/organizations/{org}/alerts/events';

export type AlertSettings = Answer<Settings, 'get'>;
export type AlertSettingsBody = RequestBody<Settings, 'put'>;
export type AlertEvents = Answer<Events, 'get'>;
export type OpenAlert = AlertEvents['open'][number];
export type AlertEventItem = AlertEvents['items'][number];

export const alertsApi = {
  settings: (org: string) => api.get<AlertSettings>(orgPath(org, 'alerts')),
  save: (org: string, body: AlertSettingsBody) => api.put<AlertSettings>(orgPath(org, 'alerts'), body),
  events: (org: string, limit = 5) => api.get<AlertEvents>(orgPath(org, 'alerts', 'events'), { limit }),
};
