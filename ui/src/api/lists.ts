/**
 * Suppressions (recipients refused with 451) and the block list (refused with 403): list with
 * a search and paging, add, remove. Entries are stored lower-cased by the server. Shapes generated (./shapes.ts).
 */
import { api, apiUrl, orgPath } from './client';
import type { Answer, Query, RequestBody } from './shapes.js';

type Suppressions = '/organizations/{org}/suppressions';
type BlockList = '/organizations/{org}/block-list';

/** `source` (manual, hard_bounce, complaint, …) is derived by the server from the stored reason. */
export type Suppression = Answer<Suppressions, 'get'>['items'][number];
export type SuppressionReason = NonNullable<RequestBody<Suppressions, 'post'>['reason']>;
export type ListQuery = Query<Suppressions, 'get'>;

const REASON_LABELS = { manual: 'Manual', hard_bounce: 'Hard bounce', complaint: 'Complaint' } satisfies Record<
  SuppressionReason,
  string
>;
/** The add form's choices, in this order. */
export const SUPPRESSION_REASONS = Object.entries(REASON_LABELS);

export const listSuppressions = (org: string, q: ListQuery) =>
  api.get<Answer<Suppressions, 'get'>>(orgPath(org, 'suppressions'), { ...q });
export const addSuppression = (org: string, email: string, reason: string) =>
  api.post<Answer<Suppressions, 'post'>>(orgPath(org, 'suppressions'), { email, reason });
export const removeSuppression = (org: string, email: string) => api.delete(orgPath(org, 'suppressions', email));
/**
 * The CSV export's address, for an `<a download>`: a same-origin GET carries the session cookie
 * and needs no CSRF token, so the browser streams the file to disk with nothing held in the page.
 */
export const suppressionsCsvUrl = (org: string) => apiUrl(orgPath(org, 'suppressions', 'export.csv'));
export type SuppressionImport = Answer<'/organizations/{org}/suppressions/import', 'post'>;
/** A CSV file (header `email`, optionally `reason`) sent as it is; bad lines come back by number. */
export const importSuppressions = (org: string, file: Blob) =>
  api.postRaw<SuppressionImport>(orgPath(org, 'suppressions', 'import'), 'text/csv', file);

export const listBlockList = (org: string, q: Query<BlockList, 'get'>) =>
  api.get<Answer<BlockList, 'get'>>(orgPath(org, 'block-list'), { ...q });
export const addBlockListEntry = (org: string, value: string) =>
  api.post<Answer<BlockList, 'post'>>(orgPath(org, 'block-list'), { value });
export const removeBlockListEntry = (org: string, value: string) => api.delete(orgPath(org, 'block-list', value));
