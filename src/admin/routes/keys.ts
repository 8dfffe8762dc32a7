import { Type, type Static } from '@sinclair/typebox';
import { KEY_SCOPES } from '../../domain/types.js';
import { KeyInput, KeyName } from '../../resources/inputs.js';
import { keyInputProblems, keyName } from '../../resources/key-details.js';
import { literals } from '../../providers/schema.js';
import type { ApiKey } from '../../domain/types.js';
import type { App, AppServices } from '../../http/app-types.js';
import { responses, Timestamp } from '../../http/schemas.js';
import { iso, isoOrNull } from '../../http/time.js';
import { createKey, MAX_GRACE_SECONDS, revokeKey, rotateKey, updateKey } from '../keys.js';
import {
  ADMIN_BODY_ERRORS,
  ADMIN_ERRORS,
  ADMIN_SECURITY,
  ADMIN_TAGS,
  invalidFields,
  LookupId,
  NoContent,
  OrgParams,
  requireOrganization,
} from './common.js';
import { IssuedKeyResource, KeyResource, keyResource } from './resources.js';

const KeyParams = Type.Object({ org: LookupId, keyId: Type.String({ minLength: 1, maxLength: 100 }) });

/** The shared key shape plus when a rotated or revoked key stops authenticating (rotation grace). */
const KeyWithExpiry = Type.Composite([
  KeyResource,
  Type.Object({
    expires_at: Type.Union([Timestamp, Type.Null()], {
      description:
        'When the key stops (or stopped) authenticating: the end of the grace period a rotation gave it, or ' +
        'its revocation; null while active',
    }),
  }),
]);
const IssuedKeyWithExpiry = Type.Composite([IssuedKeyResource, Type.Object({ expires_at: Type.Null() })]);

const RotateInput = Type.Object(
  {
    grace_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_GRACE_SECONDS,
        default: 0,
        description: 'Seconds during which the old key keeps working beside the new one; 0 (the default) cuts it off at once',
      }),
    ),
  },
  { additionalProperties: false },
);

const RotateResult = Type.Composite([
  IssuedKeyWithExpiry,
  Type.Object({
    previous_key: Type.Object(
      { id: Type.String(), expires_at: Timestamp },
      {
        description: 'The key this one replaces and when it stops authenticating',
      },
    ),
  }),
]);

/** PATCH: a new name (null clears it) and/or scope; what is left out stays. */
const KeyChanges = Type.Object(
  {
    name: Type.Optional(Type.Union([KeyName, Type.Null()])),
    scope: Type.Optional(literals(KEY_SCOPES)),
  },
  { additionalProperties: false, minProperties: 1 },
);

function keyWithExpiry(k: ApiKey): Static<typeof KeyWithExpiry> {
  return { ...keyResource(k), expires_at: isoOrNull(k.expires_at) };
}

/** The rules the config file applies to a given key value (src/config/file.ts). */
function checkKeyValue(input: KeyInput): void {
  if (input.key === undefined) return;
  const prefix = `${input.type === 'public' ? 'pk' : 'sk'}_${input.mode === 'test' ? 'test_' : ''}`;
  if (!input.key.startsWith(prefix)) {
    const what = `a ${input.mode === 'test' ? 'test ' : ''}${input.type} key`;
    throw invalidFields([{ field: 'key', message: `${what} must start with ${prefix}` }]);
  }
  if (input.type === 'public' && input.key.length > 200)
    throw invalidFields([{ field: 'key', message: 'public keys are at most 200 characters' }]);
}

export function registerKeyRoutes(app: App, { store }: AppServices): void {
  app.get(
    '/organizations/:org/keys',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "List an organization's keys (values of private keys are never shown again)",
        params: OrgParams,
        response: responses({ 200: Type.Object({ items: Type.Array(KeyWithExpiry) }) }, ADMIN_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      return { items: (await store.keys.list(org.id)).map(keyWithExpiry) };
    },
  );

  app.post(
    '/organizations/:org/keys',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Create a key; the response is the only place its value appears',
        params: OrgParams,
        body: KeyInput,
        response: responses({ 201: IssuedKeyWithExpiry }, [...ADMIN_BODY_ERRORS, 'conflict']),
      },
    },
    async (request, reply) => {
      checkKeyValue(request.body);
      const problems = keyInputProblems(request.body);
      if (problems.length > 0) throw invalidFields(problems);
      const { type, key, mode, scope } = request.body;
      const issued = await createKey(store, request.params.org, type, key, mode ?? 'live', {
        name: keyName(request.body.name),
        scope,
        createdBy: 'admin',
      });
      reply.code(201);
      return { ...keyResource(issued.key), key: issued.value, expires_at: null };
    },
  );

  app.post(
    '/organizations/:org/keys/:keyId/rotate',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Replace a key with a new one of the same type, mode, name and scope',
        description:
          'The old key stops working at once, unless `grace_seconds` (up to 30 days) lets both keys work ' +
          'until then; revoking the old key (DELETE) ends its grace period at once. The body is optional.',
        params: KeyParams,
        body: RotateInput,
        response: responses({ 201: RotateResult }, [...ADMIN_BODY_ERRORS, 'conflict']),
      },
      // A bare POST (no body, as before grace periods existed) means the defaults.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      const rotation = await rotateKey(store, org.id, request.params.keyId, request.body.grace_seconds ?? 0);
      reply.code(201);
      return {
        ...keyResource(rotation.key),
        key: rotation.value,
        expires_at: null,
        previous_key: { id: rotation.previous.id, expires_at: iso(rotation.previous.expires_at) },
      };
    },
  );

  app.patch(
    '/organizations/:org/keys/:keyId',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "Rename a key (null clears its name) or change a private key's scope",
        description: '`send_only` keys send but cannot read history, messages, templates or the test inbox (403 forbidden).',
        params: KeyParams,
        body: KeyChanges,
        response: responses({ 200: KeyWithExpiry }, ADMIN_BODY_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const current = await store.keys.get(org.id, request.params.keyId);
      const { name, scope } = request.body;
      if (current !== undefined) {
        const problems = keyInputProblems({ type: current.type, name: name ?? undefined, scope });
        if (problems.length > 0) throw invalidFields(problems);
      }
      const changes = {
        ...(name !== undefined && { name: name === null ? null : keyName(name) }),
        ...(scope !== undefined && { scope }),
      };
      return keyWithExpiry(await updateKey(store, org.id, request.params.keyId, changes));
    },
  );

  app.delete(
    '/organizations/:org/keys/:keyId',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "Revoke a key (also ends a rotated key's grace period)",
        params: KeyParams,
        response: responses({ 204: NoContent }, ADMIN_ERRORS),
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      await revokeKey(store, org.id, request.params.keyId);
      return reply.code(204).send();
    },
  );
}
