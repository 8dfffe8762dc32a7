import { Type } from '@sinclair/typebox';
import { KeyInput } from '../../config/resources.js';
import type { App, AppServices } from '../../http/app-types.js';
import { responses } from '../../http/schemas.js';
import { createKey, revokeKey, rotateKey } from '../keys.js';
import {
  ADMIN_BODY_ERRORS, ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, invalidFields, LookupId, NoContent, OrgParams, requireOrganization,
} from './common.js';
import { IssuedKeyResource, KeyResource, keyResource } from './resources.js';

const KeyParams = Type.Object({ org: LookupId, keyId: Type.String({ minLength: 1, maxLength: 100 }) });

/** The rules the config file applies to a given key value (src/config/file.ts). */
function checkKeyValue(input: KeyInput): void {
  if (input.key === undefined) return;
  const prefix = input.type === 'public' ? 'pk_' : 'sk_';
  if (!input.key.startsWith(prefix)) throw invalidFields([{ field: 'key', message: `a ${input.type} key must start with ${prefix}` }]);
  if (input.type === 'public' && input.key.length > 200) throw invalidFields([{ field: 'key', message: 'public keys are at most 200 characters' }]);
}

export function registerKeyRoutes(app: App, { store }: AppServices): void {
  app.get('/organizations/:org/keys', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: "List an organization's keys (values of private keys are never shown again)",
      params: OrgParams,
      response: responses({ 200: Type.Object({ items: Type.Array(KeyResource) }) }, ADMIN_ERRORS),
    },
  }, async (request) => {
    const org = await requireOrganization(store, request.params.org);
    return { items: (await store.keys.list(org.id)).map(keyResource) };
  });

  app.post('/organizations/:org/keys', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: 'Create a key; the response is the only place its value appears',
      params: OrgParams,
      body: KeyInput,
      response: responses({ 201: IssuedKeyResource }, [...ADMIN_BODY_ERRORS, 'conflict']),
    },
  }, async (request, reply) => {
    checkKeyValue(request.body);
    const issued = await createKey(store, request.params.org, request.body.type, request.body.key);
    reply.code(201);
    return { ...keyResource(issued.key), key: issued.value };
  });

  app.post('/organizations/:org/keys/:keyId/rotate', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: 'Replace a key with a new one of the same type; the old one stops working at once',
      params: KeyParams,
      response: responses({ 201: IssuedKeyResource }, [...ADMIN_ERRORS, 'conflict']),
    },
  }, async (request, reply) => {
    const org = await requireOrganization(store, request.params.org);
    const issued = await rotateKey(store, org.id, request.params.keyId);
    reply.code(201);
    return { ...keyResource(issued.key), key: issued.value };
  });

  app.delete('/organizations/:org/keys/:keyId', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: 'Revoke a key',
      params: KeyParams,
      response: responses({ 204: NoContent }, ADMIN_ERRORS),
    },
  }, async (request, reply) => {
    const org = await requireOrganization(store, request.params.org);
    await revokeKey(store, org.id, request.params.keyId);
    return reply.code(204).send();
  });
}
