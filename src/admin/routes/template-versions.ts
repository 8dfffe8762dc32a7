import { Type } from '@sinclair/typebox';
import type { Template } from '../../domain/types.js';
import { ApiError } from '../../errors/api-error.js';
import type { App, AppServices } from '../../http/app-types.js';
import { templateResource } from '../../http/routes/templates.js';
import { responses, Timestamp } from '../../http/schemas.js';
import { iso } from '../../http/time.js';
import type { Store } from '../../storage/store.js';
import { KEPT_TEMPLATE_VERSIONS, type TemplateVersion } from '../../storage/template-versions.js';
import { restoreTemplate } from '../templates.js';
import { TemplateWritten, writtenResource } from './templates.js';
import { ADMIN_BODY_ERRORS, ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, LookupId, requireOrganization } from './common.js';

const TemplateParams = Type.Object({ org: LookupId, id: LookupId });

const VersionItem = Type.Object({
  version: Type.Integer(),
  created_at: Timestamp,
  current: Type.Boolean({ description: 'The version the template has now' }),
  // The template as GET returned it at that version.
  template: Type.Ref('Template'),
});

async function requireTemplate(store: Store, orgId: string, id: string): Promise<Template> {
  const template = await store.templates.get(orgId, id);
  if (template === undefined)
    throw new ApiError('not_found', { message: `Template "${id}" does not exist in organization "${orgId}".` });
  return template;
}

/**
 * The stored versions, newest first. A template last written before versions were kept has no
 * row for its current version: it is listed from the template itself, so it can be seen and
 * stays restorable once edited.
 */
async function history(store: Store, current: Template): Promise<TemplateVersion[]> {
  const stored = await store.templateVersions.list(current.org_id, current.id);
  if (stored.some((v) => v.version === current.version)) return stored;
  const { org_id: _o, id: _i, version, created_at: _c, updated_at, ...fields } = current;
  return [{ version, fields, created_at: updated_at }, ...stored];
}

const asResource = (current: Template, v: TemplateVersion) =>
  templateResource({
    ...v.fields,
    org_id: current.org_id,
    id: current.id,
    version: v.version,
    created_at: current.created_at,
    updated_at: v.created_at,
  });

/** Template history and restore (issue 15): GET …/versions, POST …/versions/{version}/restore. */
export function registerTemplateVersionRoutes(app: App, { store }: AppServices): void {
  app.get(
    '/organizations/:org/templates/:id/versions',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "A template's versions, newest first",
        description:
          `Every write of a template (PUT, PATCH, restore, the config file) ` +
          `stores a version; the newest ${KEPT_TEMPLATE_VERSIONS} are kept.`,
        params: TemplateParams,
        response: responses({ 200: Type.Object({ items: Type.Array(VersionItem) }) }, ADMIN_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const current = await requireTemplate(store, org.id, request.params.id);
      const items = (await history(store, current)).map((v) => ({
        version: v.version,
        created_at: iso(v.created_at),
        current: v.version === current.version,
        template: asResource(current, v),
      }));
      return { items };
    },
  );

  app.post(
    '/organizations/:org/templates/:id/versions/:version/restore',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Restore a version of a template',
        description:
          'Writes the content of that version again as a new version and returns the template. `frozen` is kept ' +
          'as it is now (a plan downgrade, not content); `sample_params` comes back with the content. Refused like a ' +
          'PUT of the same fields (400 `invalid_body`), e.g. when its `service_id` names a service that no longer exists. ' +
          '404 for a version that is not kept.',
        params: Type.Object({ org: LookupId, id: LookupId, version: Type.Integer({ minimum: 1 }) }),
        response: responses({ 200: TemplateWritten }, ADMIN_BODY_ERRORS),
      },
    },
    async (request) => {
      const { version } = request.params;
      const org = await requireOrganization(store, request.params.org);
      const current = await requireTemplate(store, org.id, request.params.id);
      const wanted = (await history(store, current)).find((v) => v.version === version);
      if (wanted === undefined) {
        throw new ApiError('not_found', {
          message: `Template "${current.id}" has no version ${version} (the newest ${KEPT_TEMPLATE_VERSIONS} are kept).`,
        });
      }
      const restored = await restoreTemplate(store, current, wanted.fields);
      if (restored === undefined) throw new ApiError('not_found', { message: `Template "${current.id}" was deleted meanwhile.` });
      return writtenResource(restored);
    },
  );
}
