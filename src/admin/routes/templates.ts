import { Type } from '@sinclair/typebox';
import { templateFields } from '../../config/normalize.js';
import { ResourceId, TemplateInput } from '../../config/resources.js';
import { ApiError } from '../../errors/api-error.js';
import type { App, AppServices } from '../../http/app-types.js';
import { templateResource } from '../../http/routes/templates.js';
import { responses } from '../../http/schemas.js';
import { templateProblems } from '../../templates/check.js';
import {
  ADMIN_BODY_ERRORS, ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, fieldPath, invalidFields, LookupId, NoContent, OrgParams,
  requireOrganization,
} from './common.js';

const TemplateParams = Type.Object({ org: LookupId, id: LookupId });

const notFound = (org: string, id: string) =>
  new ApiError('not_found', { message: `Template "${id}" does not exist in organization "${org}".` });

export function registerTemplateRoutes(app: App, { store }: AppServices): void {
  app.get('/organizations/:org/templates', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: "List an organization's templates",
      params: OrgParams,
      response: responses({ 200: Type.Object({ items: Type.Array(Type.Ref('Template')) }) }, ADMIN_ERRORS),
    },
  }, async (request) => {
    const org = await requireOrganization(store, request.params.org);
    return { items: (await store.templates.list(org.id)).map(templateResource) };
  });

  app.get('/organizations/:org/templates/:id', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: 'One template with its content and parameter schema',
      params: TemplateParams,
      response: responses({ 200: Type.Ref('Template') }, ADMIN_ERRORS),
    },
  }, async (request) => {
    const org = await requireOrganization(store, request.params.org);
    const template = await store.templates.get(org.id, request.params.id);
    if (template === undefined) throw notFound(org.id, request.params.id);
    return templateResource(template);
  });

  app.put('/organizations/:org/templates/:id', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: 'Create or replace a template',
      description: 'Replaces the whole template; omitted fields take their defaults. Content fields must be valid '
        + 'Handlebars and the parameter schema must be satisfiable; `service_id` must name a service of the organization. '
        + 'Queued messages keep the content they were rendered with.',
      params: Type.Object({ org: LookupId, id: ResourceId }),
      body: TemplateInput,
      response: responses({ 200: Type.Ref('Template'), 201: Type.Ref('Template') }, ADMIN_BODY_ERRORS),
    },
  }, async (request, reply) => {
    const org = await requireOrganization(store, request.params.org);
    const id = request.params.id;
    const fields = templateFields(id, request.body);
    const problems = templateProblems(fields, fields.params).map((p) => ({ field: fieldPath(p.path), message: p.message }));
    if (problems.length > 0) throw invalidFields(problems);
    const now = store.clock.now();
    const { outcome, template } = await store.transaction(async (tx) => {
      if (fields.service_id !== null && (await tx.services.get(org.id, fields.service_id)) === undefined) {
        throw invalidFields([{ field: 'service_id', message: `"${fields.service_id}" names no service of organization "${org.id}"` }]);
      }
      const result = await tx.templates.put(org.id, id, fields, now);
      return { outcome: result, template: await tx.templates.get(org.id, id) };
    });
    if (template === undefined) throw notFound(org.id, id);
    reply.code(outcome === 'created' ? 201 : 200);
    return templateResource(template);
  });

  app.delete('/organizations/:org/templates/:id', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: 'Delete a template',
      params: TemplateParams,
      response: responses({ 204: NoContent }, ADMIN_ERRORS),
    },
  }, async (request, reply) => {
    const org = await requireOrganization(store, request.params.org);
    if (!(await store.templates.delete(org.id, request.params.id))) throw notFound(org.id, request.params.id);
    return reply.code(204).send();
  });
}
