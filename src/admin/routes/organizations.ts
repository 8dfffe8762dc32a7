import { Type } from '@sinclair/typebox';
import { type OrganizationSettingsInput, ResourceId } from '../../resources/inputs.js';
import type { Organization } from '../../domain/types.js';
import { ApiError } from '../../errors/api-error.js';
import type { App, AppServices } from '../../http/app-types.js';
import { responses } from '../../http/schemas.js';
import { putOrganization } from '../organizations.js';
import { checkMerged, mergePatch, withoutReadOnly } from '../put-patch.js';
import { OrganizationPatch, OrganizationPut } from './bodies.js';
import { ADMIN_BODY_ERRORS, ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, OrgParams, requireOrganization } from './common.js';
import { OrganizationResource, organizationResource, SECRET_MASK } from './resources.js';

/**
 * A captcha block that sends the masked secret back (GET → edit → PUT) keeps the stored secret
 * instead of storing the mask.
 */
function keepMaskedSecret<T extends Pick<OrganizationSettingsInput, 'captcha'>>(body: T, current: Organization | undefined): T {
  if (body.captcha?.secret_key !== SECRET_MASK) return body;
  if (current?.captcha == null) {
    throw new ApiError('invalid_body', {
      message: `captcha.secret_key is the mask "${SECRET_MASK}" but no secret is stored: send the real secret.`,
      details: { fields: [{ field: 'captcha.secret_key', message: 'is the mask of a secret that is not stored' }] },
    });
  }
  return { ...body, captcha: { ...body.captcha, secret_key: current.captcha.secret_key } };
}

/**
 * The organization as a PATCH starts from: GET's body without its read-only fields, `credits`
 * (a starting balance) and the block list's entries (left out so that a PATCH not naming them
 * never undoes an entry added at /block-list meanwhile).
 */
function patchBase(r: OrganizationResource): Record<string, unknown> {
  const { id: _i, held: _h, created_at: _c, updated_at: _u, credits: _cr, ...rest } = r;
  const { list: _l, ...blockList } = rest.security.block_list;
  return { ...rest, security: { ...rest.security, block_list: blockList } };
}

const PUT_DESCRIPTION =
  'Creates or replaces the organization. Takes what GET returns: `id`, `held`, `created_at` and ' +
  "`updated_at` are ignored (an `id` other than the URL's is refused). Every setting is required, `security` with " +
  'all its fields; a missing one is 400 `invalid_body` naming it. `credits` is a starting balance, used only when the ' +
  'organization is created (top up with POST …/credits). `security.block_list.list`, when given, becomes the whole ' +
  'block list; left out, the list is not touched. A captcha `secret_key` of "' +
  SECRET_MASK +
  '" keeps the stored secret.';

const PATCH_DESCRIPTION =
  'Changes only the fields the body names. `security` and `captcha` merge into the stored ones ' +
  'one level deep; anything deeper (`ip_limit`, `block_list`) and every list is replaced whole. Unknown fields are 400.';

export function registerOrganizationRoutes(app: App, { store }: AppServices): void {
  app.get(
    '/organizations',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'List organizations',
        response: responses({ 200: Type.Object({ items: Type.Array(OrganizationResource) }) }, ADMIN_ERRORS),
      },
    },
    async () => {
      const orgs = await store.organizations.list();
      return { items: await Promise.all(orgs.map((o) => organizationResource(store, o))) };
    },
  );

  app.get(
    '/organizations/:org',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'One organization with its settings, credits and number of held messages',
        params: OrgParams,
        response: responses({ 200: OrganizationResource }, ADMIN_ERRORS),
      },
    },
    async (request) => organizationResource(store, await requireOrganization(store, request.params.org)),
  );

  app.put(
    '/organizations/:org',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Create or replace an organization',
        description: PUT_DESCRIPTION,
        params: Type.Object({ org: ResourceId }),
        body: OrganizationPut,
        response: responses({ 200: OrganizationResource, 201: OrganizationResource }, ADMIN_BODY_ERRORS),
      },
    },
    async (request, reply) => {
      const id = request.params.org;
      const current = await store.organizations.get(id);
      const body = keepMaskedSecret(withoutReadOnly(request.body, id), current);
      const { created, org } = await putOrganization(store, id, body);
      reply.code(created ? 201 : 200);
      return organizationResource(store, org);
    },
  );

  app.patch(
    '/organizations/:org',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Change some settings of an organization',
        description: PATCH_DESCRIPTION,
        params: OrgParams,
        body: OrganizationPatch,
        response: responses({ 200: OrganizationResource }, ADMIN_BODY_ERRORS),
      },
    },
    async (request) => {
      const current = await requireOrganization(store, request.params.org);
      const merged = checkMerged(
        OrganizationPut,
        mergePatch(patchBase(await organizationResource(store, current)), request.body),
      );
      const { org } = await putOrganization(store, current.id, keepMaskedSecret(merged, current));
      return organizationResource(store, org);
    },
  );
}
