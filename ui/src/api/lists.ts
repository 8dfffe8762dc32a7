/**
 * Suppressions (recipients refused with 451) and the block list (refused with 403): list with
 * a search and paging, add, remove. Entries are stored lower-cased by the server.
 */
import { api, orgPath } from './client';

/** Why an address is suppressed, as the server derives it from the stored reason. */
export interface Suppression {
  email: string;
  reason: string;
  created_at: string;
  /** manual, hard_bounce, complaint, …; older servers leave it out (the UI falls back to `reason`). */
  source?: string;
  /** The message whose bounce or complaint suppressed the address, when there was one. */
  message_id?: string | null;
}

export interface SuppressionPage {
  items: Suppression[];
  next_cursor?: string | null;
}

/** A block-list entry: the server answers plain strings, or objects once it tells more. */
export type BlockListItem = string | { value: string; created_at?: string };

export interface BlockListPage {
  items: BlockListItem[];
  watch_variable: string | null;
  next_cursor?: string | null;
}

export interface ListQuery {
  q?: string;
  cursor?: string;
  limit?: number;
}

export const SUPPRESSION_REASONS = [['manual', 'Manual'], ['hard_bounce', 'Hard bounce'], ['complaint', 'Complaint']] as const;

export const listSuppressions = (org: string, q: ListQuery) => api.get<SuppressionPage>(orgPath(org, 'suppressions'), { ...q });
export const addSuppression = (org: string, email: string, reason: string) => api.post<Suppression>(orgPath(org, 'suppressions'), { email, reason });
export const removeSuppression = (org: string, email: string) => api.delete(orgPath(org, 'suppressions', email));

export const listBlockList = (org: string, q: ListQuery) => api.get<BlockListPage>(orgPath(org, 'block-list'), { ...q });
export const addBlockListEntry = (org: string, value: string) => api.post<{ value: string }>(orgPath(org, 'block-list'), { value });
export const removeBlockListEntry = (org: string, value: string) => api.delete(orgPath(org, 'block-list', value));

/** The value of a block-list item whichever shape the server answered. */
export const blockListValue = (item: BlockListItem): string => (typeof item === 'string' ? item : item.value);
