import { Type } from '@sinclair/typebox';
import { ApiError } from '../../errors/api-error.js';
import type { App, AppServices } from '../../http/app-types.js';
import { responses } from '../../http/schemas.js';
import { ADMIN_BODY_ERRORS, ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, LookupId, NoContent } from './common.js';
import { requireOrganization } from './common.js';
import { ServiceParams, serviceNotFound as notFound } from './service-fields.js';

/**
 * A service's mail when the service goes (issue 29): a delete is refused while messages wait on
 * the service, and one operation moves them to another service first. Before, a deleted
 * service's queued mail became `held_service_error` "retried when the service is changed", for
 * a service that no longer existed.
 */

const Bound = Type.Object({
  queued: Type.Integer({ description: 'Queued: due now or waiting for a retry' }),
  sending: Type.Integer({ description: 'In a worker’s hands now (left to finish, never moved)' }),
  held: Type.Integer({ description: 'Held for credits or on the service’s error' }),
});

export function registerServiceMoveRoutes(app: App, { store }: AppServices): void {
  app.get(
    '/organizations/:org/services/:id/messages-waiting',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Messages still bound to a service (what a delete waits for)',
        description: 'Also answers for a service id that no longer exists, whose messages were left behind by an earlier delete.',
        params: ServiceParams,
        response: responses({ 200: Bound }, ADMIN_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      return store.queue.boundToService(org.id, request.params.id);
    },
  );

  app.post(
    '/organizations/:org/services/:id/move-messages',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "Move a service's queued and held messages to another service",
        description:
          'Queued messages keep their due time; messages held for credits stay held; messages held on this ' +
          "service's error (`held_service_error`) are queued again, due now, on the new service. A message a worker " +
          'is sending is left to finish. Each moved message gets a `queued` event (reason `service_moved`, `from`, `to`). ' +
          '`{id}` may name a service already deleted (its messages were stranded); `to` must exist and differ from it.',
        params: ServiceParams,
        body: Type.Object({ to: LookupId }, { additionalProperties: false }),
        response: responses({ 200: Type.Object({ moved: Type.Integer() }) }, ADMIN_BODY_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const { id } = request.params;
      const { to } = request.body;
      if (to === id)
        throw new ApiError('invalid_body', {
          message: 'The request body is invalid: to is the service the messages are on.',
          details: { fields: [{ field: 'to', message: 'is the service the messages are on' }] },
        });
      const now = store.clock.now();
      const moved = await store.transaction(async (tx) => {
        // Holds `to` until the move commits: a concurrent DELETE of it waits, then counts the
        // moved messages (409); or the DELETE went first and `to` is gone (404).
        if (!(await tx.services.lockShared(org.id, to))) throw notFound(org.id, to);
        return tx.queue.moveService(org.id, id, to, now);
      });
      return { moved };
    },
  );

  app.delete(
    '/organizations/:org/services/:id',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Delete an email service',
        description:
          'Refused with 409 `conflict` while messages are bound to the service (`details`: `queued`, `sending`, `held`): ' +
          'move them first (POST …/move-messages), or wait for them. Templates that name it keep the name; creating a ' +
          'service with the same id links them again.',
        params: ServiceParams,
        response: responses({ 204: NoContent }, [...ADMIN_ERRORS, 'conflict']),
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      const { id } = request.params;
      await store.transaction(async (tx) => {
        // The delete first: it takes the row's lock (a move onto it that holds the row goes
        // first, and its messages are counted below), and the count rolls it back.
        if (!(await tx.services.delete(org.id, id))) throw notFound(org.id, id);
        const bound = await tx.queue.boundToService(org.id, id);
        if (bound.queued + bound.sending + bound.held > 0)
          throw new ApiError('conflict', {
            message:
              `Service "${id}" still has ${bound.queued} queued, ${bound.sending} sending and ${bound.held} held ` +
              'messages: move them to another service first (POST …/move-messages), or wait for them.',
            details: { reason: 'messages_waiting', ...bound },
          });
      });
      return reply.code(204).send();
    },
  );
}
