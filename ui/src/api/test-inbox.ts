/**
 * The captured test inbox in the admin API (src/admin/routes/test-inbox.ts, issue 27 §2): the
 * list, one captured message, its raw .eml (a plain link: the session cookie goes with a
 * same-origin GET) and emptying it. Shapes generated (./shapes.ts).
 */
import { api, apiUrl, orgPath } from './client';
import type { Answer, Item } from './shapes.js';

type Inbox = '/organizations/{org}/test-inbox';
type One = '/organizations/{org}/test-inbox/{id}';

/** One row of the inbox: the envelope, the subject and the message's status now. */
export type InboxItem = Item<Inbox>;
/** One captured message: its header fields in order, the HTML and text parts, the attachments listed. */
export type InboxMessage = Answer<One, 'get'>;

export const testInboxApi = {
  list: (org: string, query: Record<string, string | undefined>) =>
    api.get<Answer<Inbox, 'get'>>(orgPath(org, 'test-inbox'), query),
  get: (org: string, id: string) => api.get<InboxMessage>(orgPath(org, 'test-inbox', id)),
  empty: (org: string) => api.delete(orgPath(org, 'test-inbox')),
  /** The `.eml` download's address (an `<a download>`; the server names the file `<message_id>.eml`). */
  rawUrl: (org: string, id: string) => apiUrl(orgPath(org, 'test-inbox', id, 'raw')),
};
