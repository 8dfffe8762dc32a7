/**
 * The messages screens' side of the admin API: the history list (GET …/messages, the same
 * query and items as GET /v1/history), one message with its timeline and rendered content, and
 * the operator's release and cancel of a held message.
 */
import { api, orgPath } from './client';
import type { RenderedEmailView } from './template-types';
import type { Page } from './types';

/** Every status a message can be in (src/domain/types.ts MESSAGE_STATUSES). */
export const MESSAGE_STATUSES = [
  'queued', 'held', 'held_service_error', 'sending', 'sent',
  'delivered', 'bounced', 'complained', 'failed', 'discarded',
] as const;

/** One row of the history. */
export interface MessageSummary {
  message_id: string;
  status: string;
  template_id: string;
  service_id: string;
  subject: string | null;
  to: string[];
  created_at: string;
  sent_at: string | null;
}

/** One entry of a message's timeline (src/http/routes/timeline.ts). */
export interface TimelineEvent {
  type: string;
  at: string;
  recipient?: string;
  reason?: string;
  provider?: string;
  bounce_type?: 'hard' | 'soft';
  status?: string;
  details?: Record<string, unknown>;
}

export interface MessageRecipient {
  address: string;
  kind: 'to' | 'cc' | 'bcc';
  state: string;
  reason?: string;
}

/** The rendered email as stored for sending; null once retention removed it. */
export interface MessageContent extends RenderedEmailView {
  headers?: Record<string, string>;
}

export interface MessageDetail {
  message_id: string;
  status: string;
  created_at: string;
  sent_at: string | null;
  template_id: string;
  service_id: string;
  sent_via?: string;
  provider_message_id?: string;
  recipients?: MessageRecipient[];
  events: TimelineEvent[];
  content?: MessageContent | null;
}

export type HistoryQuery = Record<string, string | undefined>;

export const listMessages = (org: string, query: HistoryQuery) => api.get<Page<MessageSummary>>(orgPath(org, 'messages'), query);
export const getMessage = (org: string, id: string) => api.get<MessageDetail>(orgPath(org, 'messages', id));
export const releaseMessage = (org: string, id: string) => api.post<{ message_id: string; status: string }>(orgPath(org, 'messages', id, 'release'));
export const cancelMessage = (org: string, id: string) => api.post<{ message_id: string; status: string }>(orgPath(org, 'messages', id, 'cancel'));
