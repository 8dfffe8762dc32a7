import { Type } from '@sinclair/typebox';
import { readStoredContent } from '../../delivery/stored.js';
import type { App, AppServices } from '../../http/app-types.js';
import { HistoryPage, historyPage, tidyBoundErrors } from '../../http/history-query.js';
import { AdminHistoryQuery, searchFilter } from '../../http/history-search.js';
import { Message, messageBody } from '../../http/routes/messages.js';
import { responses } from '../../http/schemas.js';
import type { Store } from '../../storage/store.js';
import { renderedView, RenderedView } from '../../templates/rendered-view.js';
import { requireMessage } from './message-source.js';
import { ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, LookupId, OrgParams, requireOrganization } from './common.js';

/**
 * The operator's view of an organization's messages (the UI's Messages page): the list is
 * GET /v1/history's query and page (history-query.ts), the detail GET /v1/messages/{id}'s body
 * as a private key sees it (messages.ts), plus the rendered content as stored for sending.
 */

const Content = Type.Composite([RenderedView], {
  description:
    'The rendered email as stored for sending, written as the render ' +
    'endpoints write it; null when it is no longer stored or cannot be read',
});

const MessageDetail = Type.Composite([Message, Type.Object({ content: Type.Union([Content, Type.Null()]) })]);

/** The stored rendered email, as addresses in their header form; null when missing or unreadable. */
async function storedContent(store: Store, messageId: string): Promise<RenderedView | null> {
  const row = await store.messages.content(messageId);
  if (row === undefined) return null;
  const stored = readStoredContent(row.content, row.attachments);
  if (!stored.ok) return null;
  return renderedView(stored.email);
}

export function registerMessageHistoryRoutes(app: App, { store, clock, config }: AppServices): void {
  app.get(
    '/organizations/:org/messages',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary:
          "An organization's message history, newest first: GET /v1/history's filters, items and paging, and the " +
          "operator's search (part of a recipient, part of the subject, one message id)",
        params: OrgParams,
        querystring: AdminHistoryQuery,
        response: responses({ 200: HistoryPage }, [...ADMIN_ERRORS, 'invalid_body']),
      },
      attachValidation: true,
    },
    async (request) => {
      if (request.validationError !== undefined) throw tidyBoundErrors(request.validationError);
      const org = await requireOrganization(store, request.params.org);
      return historyPage({ store, clock, config }, org.id, request.query, 'live', searchFilter(request.query));
    },
  );

  app.get(
    '/organizations/:org/messages/:id',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'One message as GET /v1/messages/{id} shows it to a private key, with its rendered content',
        params: Type.Object({ org: LookupId, id: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: responses({ 200: MessageDetail }, [...ADMIN_ERRORS, 'invalid_body', 'message_not_found']),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const message = await requireMessage({ store, clock, config }, org.id, request.params.id);
      const [body, content] = await Promise.all([messageBody(store, message, true), storedContent(store, message.id)]);
      return { ...body, content };
    },
  );
}
