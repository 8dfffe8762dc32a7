/**
 * The request log in the admin API (src/admin/routes/request-log.ts, issue 29): refused public API
 * requests (4xx) of an organization, newest first. Shapes generated (./shapes.ts).
 */
import { api, orgPath } from './client';
import type { Answer, Item } from './shapes.js';

type Log = '/organizations/{org}/request-log';

/** One refused request: time, key id, route, status, code, message and its non-secret fields. */
export type RequestLogEntry = Item<Log>;

export const requestLogApi = {
  list: (org: string, query: Record<string, string | undefined>) =>
    api.get<Answer<Log, 'get'>>(orgPath(org, 'request-log'), query),
};
