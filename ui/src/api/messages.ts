/**
 * The messages screens' side of the admin API: the history list (GET …/messages, the same
 * query and items as GET /v1/history), one message with its timeline and rendered content, and
 * the operator's release and cancel of a held message. Shapes generated (./shapes.ts).
 */
import { api, orgPath } from './client';
import type { Answer, Item } from './shapes.js';

/** One row of the history. */
export type MessageSummary = Item<'/organizations/{org}/messages'>;
export type MessageDetail = Answer<'/organizations/{org}/messages/{id}', 'get'>;
/** One entry of a message's timeline (src/http/routes/timeline-schema.ts). */
export type TimelineEvent = MessageDetail['events'][number];
export type MessageRecipient = NonNullable<MessageDetail['recipients']>[number];
/** The rendered email as stored for sending; the answer's `content` is null once retention removed it. */
export type MessageContent = NonNullable<MessageDetail['content']>;

/** The history's filters as the page keeps them in the hash (strings; the server parses them). */
export type HistoryQuery = Record<string, string | undefined>;

type History = Answer<'/organizations/{org}/messages', 'get'>;
type Released = Answer<'/organizations/{org}/messages/{id}/release', 'post'>;
type Cancelled = Answer<'/organizations/{org}/messages/{id}/cancel', 'post'>;

export const listMessages = (org: string, query: HistoryQuery) => api.get<History>(orgPath(org, 'messages'), query);
export const getMessage = (org: string, id: string) => api.get<MessageDetail>(orgPath(org, 'messages', id));
export const releaseMessage = (org: string, id: string) => api.post<Released>(orgPath(org, 'messages', id, 'release'));
export const cancelMessage = (org: string, id: string) => api.post<Cancelled>(orgPath(org, 'messages', id, 'cancel'));
