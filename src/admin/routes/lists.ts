import { Type } from '@sinclair/typebox';
import { SuppressionInput } from '../../config/resources.js';
import { ApiError } from '../../errors/api-error.js';
import type { App, AppServices } from '../../http/app-types.js';
import { responses } from '../../http/schemas.js';
import { normalizeAddress } from '../../storage/lists.js';
import {
  ADMIN_BODY_ERRORS, ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, invalidFields, LookupId, NoContent, OrgParams, requireOrganization,
} from './common.js';
import { BlockListResource, SuppressionResource, suppressionResource } from './resources.js';

const BlockListInput = Type.Object({
  value: Type.String({ minLength: 1, maxLength: 254, pattern: '\\S', description: 'An address or value to refuse; compared case-insensitively' }),
}, { additionalProperties: false });

/**
 * Suppressions (recipients refused with 451) and the block list (recipients or watched values
 * refused with 403). Both store entries lower-cased; adding an existing entry is a 200 that
 * leaves it as it was, removing a missing one a 404.
 */
export function registerListRoutes(app: App, { store }: AppServices): void {
  app.get('/organizations/:org/suppressions', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: "List an organization's suppressed recipients",
      params: OrgParams,
      response: responses({ 200: Type.Object({ items: Type.Array(SuppressionResource) }) }, ADMIN_ERRORS),
    },
  }, async (request) => {
    const org = await requireOrganization(store, request.params.org);
    return { items: (await store.suppressions.list(org.id)).map(suppressionResource) };
  });

  app.post('/organizations/:org/suppressions', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: 'Suppress a recipient (201 added, 200 already suppressed: the first reason is kept)',
      params: OrgParams,
      body: SuppressionInput,
      response: responses({ 200: SuppressionResource, 201: SuppressionResource }, ADMIN_BODY_ERRORS),
    },
  }, async (request, reply) => {
    const org = await requireOrganization(store, request.params.org);
    const { email, reason } = request.body;
    if (!normalizeAddress(email).includes('@')) throw invalidFields([{ field: 'email', message: 'must be an email address' }]);
    const added = await store.suppressions.add(org.id, email, reason ?? 'manual', store.clock.now());
    const entry = await store.suppressions.get(org.id, email);
    if (entry === undefined) throw new ApiError('conflict', { message: `The suppression of ${email} was removed concurrently.` });
    reply.code(added ? 201 : 200);
    return suppressionResource(entry);
  });

  app.delete('/organizations/:org/suppressions/:email', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: 'Remove a recipient from the suppression list',
      params: Type.Object({ org: LookupId, email: Type.String({ minLength: 1, maxLength: 254 }) }),
      response: responses({ 204: NoContent }, ADMIN_ERRORS),
    },
  }, async (request, reply) => {
    const org = await requireOrganization(store, request.params.org);
    if (!(await store.suppressions.remove(org.id, request.params.email))) {
      throw new ApiError('not_found', { message: `${request.params.email} is not suppressed in organization "${org.id}".` });
    }
    return reply.code(204).send();
  });

  app.get('/organizations/:org/block-list', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: "An organization's block list and the template parameter it also watches",
      params: OrgParams,
      response: responses({ 200: BlockListResource }, ADMIN_ERRORS),
    },
  }, async (request) => {
    const org = await requireOrganization(store, request.params.org);
    return { items: await store.blockList.list(org.id), watch_variable: org.security.block_list_watch_variable };
  });

  app.post('/organizations/:org/block-list', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: 'Add a block-list entry (201 added, 200 already listed)',
      params: OrgParams,
      body: BlockListInput,
      response: responses({ 200: Type.Object({ value: Type.String() }), 201: Type.Object({ value: Type.String() }) }, ADMIN_BODY_ERRORS),
    },
  }, async (request, reply) => {
    const org = await requireOrganization(store, request.params.org);
    const added = await store.blockList.add(org.id, request.body.value, store.clock.now());
    reply.code(added ? 201 : 200);
    return { value: normalizeAddress(request.body.value) };
  });

  app.delete('/organizations/:org/block-list/:value', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: 'Remove a block-list entry',
      params: Type.Object({ org: LookupId, value: Type.String({ minLength: 1, maxLength: 254 }) }),
      response: responses({ 204: NoContent }, ADMIN_ERRORS),
    },
  }, async (request, reply) => {
    const org = await requireOrganization(store, request.params.org);
    if (!(await store.blockList.remove(org.id, request.params.value))) {
      throw new ApiError('not_found', { message: `"${request.params.value}" is not on the block list of organization "${org.id}".` });
    }
    return reply.code(204).send();
  });
}
