import { Type } from '@sinclair/typebox';
import type { App, AppServices } from '../../http/app-types.js';
import { responses } from '../../http/schemas.js';
import { cancelMessage, releaseMessage } from '../../credits/holds.js';
import { ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, LookupId, requireOrganization } from './common.js';
import { MessageAction } from './resources.js';

const MessageParams = Type.Object({ org: LookupId, id: Type.String({ minLength: 1, maxLength: 100 }) });

export function registerMessageRoutes(app: App, { store }: AppServices): void {
  app.post(
    '/organizations/:org/messages/:id/release',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Release one held message now; it takes a credit',
        params: MessageParams,
        response: responses({ 200: MessageAction }, [...ADMIN_ERRORS, 'message_not_found', 'conflict', 'insufficient_credits']),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const status = await releaseMessage(store, org.id, request.params.id);
      return { message_id: request.params.id, status };
    },
  );

  app.post(
    '/organizations/:org/messages/:id/cancel',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Cancel a message that has not been sent; it is discarded and its credit returned',
        params: MessageParams,
        response: responses({ 200: MessageAction }, [...ADMIN_ERRORS, 'message_not_found', 'conflict']),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const status = await cancelMessage(store, org.id, request.params.id);
      return { message_id: request.params.id, status };
    },
  );
}
