/**
 * The messages screens' side of the admin API: the history list (GET …/messages, the same
 * query and items as GET /v1/history), one message with its timeline and rendered content, and
 * the operator's release and cancel of a held message. Shapes generated (./shapes.ts).
 */
import { api, apiUrl, orgPath } from './client';
import type { Answer, Item } from './shapes.js';

/** One row of the history. */
export type MessageSummary = Item<'/organizations/{org}/messages'>;
export type MessageDetail = Answer<'/organizations/{org}/messages/{id}', 'get'>;
/** One entry of a message's timeline (src/http/routes/timeline-schema.ts). */
export type TimelineEvent = MessageDetail['events'][number];
export type MessageRecipient = NonNullable<MessageDetail['recipients']>[number];
/** The rendered email as stored for sending; the answer's `content` is null once retention removed it. */
export type MessageContent = NonNullable<MessageDetail['content']>;

/** The message as composed (…/source): origin, header fields decoded, the first 256 KiB as text. */
export type MessageSource = Answer<'/organizations/{org}/messages/{id}/source', 'get'>;
/** A webhook delivery of one of the message's events (the organization's log filtered by message_id). */
export type MessageDelivery = Answer<'/organizations/{org}/webhooks/deliveries', 'get'>['items'][number];

/** The history's filters as the page keeps them in the hash (strings; the server parses them). */
export type HistoryQuery = Record<string, string | undefined>;

type History = Answer<'/organizations/{org}/messages', 'get'>;
type Released = Answer<'/organizations/{org}/messages/{id}/release', 'post'>;
type Cancelled = Answer<'/organizations/{org}/messages/{id}/cancel', 'post'>;

export const listMessages = (org: string, query: HistoryQuery) => api.get<History>(orgPath(org, 'messages'), query);
export const getMessage = (org: string, id: string) => api.get<MessageDetail>(orgPath(org, 'messages', id));
export const releaseMessage = (org: string, id: string) => api.post<Released>(orgPath(org, 'messages', id, 'release'));
export const cancelMessage = (org: string, id: string) => api.post<Cancelled>(orgPath(org, 'messages', id, 'cancel'));
/** Release or cancel many at once (…/messages/release|cancel): one result per id, partial success normal. */
export type BulkResult = Answer<'/organizations/{org}/messages/release', 'post'>;
export type BulkAction = 'release' | 'cancel';
export const bulkMessages = (org: string, action: BulkAction, ids: string[]) =>
  api.post<BulkResult>(orgPath(org, 'messages', action), { message_ids: ids });
export const getMessageSource = (org: string, id: string) => api.get<MessageSource>(orgPath(org, 'messages', id, 'source'));
/**
 * The filtered list's CSV download (every page, streamed by the server): an `<a download>`, as
 * the `.eml` below, so the browser writes it to disk as it arrives, whatever its size.
 */
export const exportMessagesUrl = (org: string, query: HistoryQuery) => apiUrl(orgPath(org, 'messages', 'export.csv'), query);
/** The `.eml` download's address (an `<a download>`: the session cookie goes with a same-origin GET). */
export const messageRawUrl = (org: string, id: string) => apiUrl(orgPath(org, 'messages', id, 'raw'));
/** The message's webhook deliveries, newest first: the first 100 (a message has a dozen events at most per endpoint). */
export const listMessageDeliveries = (org: string, id: string) =>
  api.get<Answer<'/organizations/{org}/webhooks/deliveries', 'get'>>(orgPath(org, 'webhooks', 'deliveries'), {
    message_id: id,
    limit: 100,
  });
