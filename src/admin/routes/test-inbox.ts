import { Type } from '@sinclair/typebox';
import type { App, AppServices } from '../../http/app-types.js';
import { headerValue } from '../../http/headers.js';
import {
  checkInboxId,
  InboxMessageSchema,
  InboxPage,
  InboxQuery,
  inboxPage,
  RAW_RESPONSE,
  sendRaw,
} from '../../http/routes/test-inbox.js';
import { responses } from '../../http/schemas.js';
import { emptyInbox, inboxMessage, inboxRaw } from '../../testmode/inbox.js';
import { ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, LookupId, NoContent, OrgParams, requireOrganization } from './common.js';

/**
 * An organization's captured test inbox for the operator UI (issue 27 §4): GET /v1/test-inbox's
 * list, message and raw download under the organization, and emptying it. The messages stay
 * (their timelines, GET …/messages/{id}); only the captured copies go.
 */
export function registerTestInboxRoutes(app: App, { store, clock, config, blobs }: AppServices): void {
  const params = Type.Object({ org: LookupId, id: Type.String({ minLength: 1, maxLength: 64 }) });

  app.get(
    '/organizations/:org/test-inbox',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "An organization's captured test messages, newest first: GET /v1/test-inbox's filters, items and paging",
        params: OrgParams,
        querystring: InboxQuery,
        response: responses({ 200: InboxPage }, [...ADMIN_ERRORS, 'invalid_body']),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      return inboxPage({ store, clock, config }, org.id, request.query);
    },
  );

  app.delete(
    '/organizations/:org/test-inbox',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Empties the test inbox: the captured copies go, the messages and their timelines stay',
        params: OrgParams,
        response: responses({ 204: NoContent }, ADMIN_ERRORS),
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      await emptyInbox(store, blobs.blobs, org.id);
      return reply.code(204).send();
    },
  );

  app.get(
    '/organizations/:org/test-inbox/:id',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'One captured message as GET /v1/test-inbox/{id} shows it',
        params,
        response: responses({ 200: InboxMessageSchema }, [...ADMIN_ERRORS, 'message_not_found']),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const id = checkInboxId(request.params.id);
      return inboxMessage({ store, blobs: blobs.blobs, now: clock.now(), config }, org.id, id);
    },
  );

  app.get(
    '/organizations/:org/test-inbox/:id/raw',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'One captured message as an .eml download, the exact bytes captured',
        params,
        response: { ...responses({}, [...ADMIN_ERRORS, 'message_not_found']), 200: RAW_RESPONSE },
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      const id = checkInboxId(request.params.id);
      const raw = await inboxRaw({ store, blobs: blobs.blobs, now: clock.now(), config }, org.id, id);
      return sendRaw(reply, raw, headerValue(request, 'if-none-match'));
    },
  );
}
