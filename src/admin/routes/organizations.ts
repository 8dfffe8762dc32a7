import { Type } from '@sinclair/typebox';
import { ConfigError } from '../../config/env.js';
import { OrganizationSettingsInput, ResourceId } from '../../config/resources.js';
import type { Organization } from '../../domain/types.js';
import { ApiError } from '../../errors/api-error.js';
import type { App, AppServices } from '../../http/app-types.js';
import { responses } from '../../http/schemas.js';
import { applyConfig } from '../apply.js';
import { ADMIN_BODY_ERRORS, ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, OrgParams, requireOrganization } from './common.js';
import { OrganizationResource, organizationResource, SECRET_MASK } from './resources.js';

/**
 * A captcha block that sends the masked secret back (GET → edit → PUT) keeps the stored secret
 * instead of storing the mask.
 */
function keepMaskedSecret(body: OrganizationSettingsInput, current: Organization | undefined): OrganizationSettingsInput {
  if (body.captcha?.secret_key !== SECRET_MASK) return body;
  if (current?.captcha == null) {
    throw new ApiError('invalid_body', {
      message: `captcha.secret_key is the mask "${SECRET_MASK}" but no secret is stored: send the real secret.`,
      details: { fields: [{ field: 'captcha.secret_key', message: 'is the mask of a secret that is not stored' }] },
    });
  }
  return { ...body, captcha: { ...body.captcha, secret_key: current.captcha.secret_key } };
}

export function registerOrganizationRoutes(app: App, { store }: AppServices): void {
  app.get('/organizations', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: 'List organizations',
      response: responses({ 200: Type.Object({ items: Type.Array(OrganizationResource) }) }, ADMIN_ERRORS),
    },
  }, async () => {
    const orgs = await store.organizations.list();
    return { items: await Promise.all(orgs.map((o) => organizationResource(store, o))) };
  });

  app.get('/organizations/:org', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: 'One organization with its settings, credits and number of held messages',
      params: OrgParams,
      response: responses({ 200: OrganizationResource }, ADMIN_ERRORS),
    },
  }, async (request) => organizationResource(store, await requireOrganization(store, request.params.org)));

  app.put('/organizations/:org', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: 'Create or update an organization',
      description: 'Same semantics as the config file: omitted settings keep their value; `credits` is a starting '
        + 'balance used only when the organization is created (top up with POST …/credits); block-list entries '
        + 'under `security.block_list.list` are added, never removed.',
      params: Type.Object({ org: ResourceId }),
      body: OrganizationSettingsInput,
      response: responses({ 200: OrganizationResource, 201: OrganizationResource }, ADMIN_BODY_ERRORS),
    },
  }, async (request, reply) => {
    const id = request.params.org;
    const current = await store.organizations.get(id);
    const body = keepMaskedSecret(request.body, current);
    try {
      await applyConfig(store, { organizations: [{ id, ...body }] });
    } catch (err) {
      if (err instanceof ConfigError) throw new ApiError('invalid_body', { message: err.message });
      throw err;
    }
    const org = await requireOrganization(store, id);
    reply.code(current === undefined ? 201 : 200);
    return organizationResource(store, org);
  });
}
