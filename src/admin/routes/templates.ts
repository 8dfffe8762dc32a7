import { Type } from '@sinclair/typebox';
import { ResourceId } from '../../resources/inputs.js';
import { ApiError } from '../../errors/api-error.js';
import type { Template } from '../../domain/types.js';
import type { App, AppServices } from '../../http/app-types.js';
import { TemplateResource, templateResource } from '../../http/routes/templates.js';
import { responses } from '../../http/schemas.js';
import { checkMerged, mergePatch, withoutReadOnly } from '../put-patch.js';
import { completeTemplateInput, nestContent, putTemplate, templatePatchBase, templateWarnings } from '../templates.js';
import { TEMPLATE_REQUIRED, TemplatePatch, TemplatePut } from './bodies.js';
import {
  ADMIN_BODY_ERRORS,
  ADMIN_ERRORS,
  ADMIN_SECURITY,
  ADMIN_TAGS,
  LookupId,
  NoContent,
  OrgParams,
  requireOrganization,
} from './common.js';

const TemplateParams = Type.Object({ org: LookupId, id: LookupId });

/**
 * A write's answer (PUT, PATCH, restore): the template as GET shows it and, only when there is
 * one, what it stored that a send would not take (so an answer without warnings equals GET's).
 */
export const TemplateWritten = Type.Composite([
  TemplateResource,
  Type.Object({
    warnings: Type.Optional(
      Type.Array(
        Type.Object({
          code: Type.Literal('sample_params_mismatch'),
          message: Type.String(),
          issues: Type.Array(Type.Object({ param: Type.String(), code: Type.String(), message: Type.String() }), {
            description: "As a send's 422 `invalid_template_params` lists them",
          }),
        }),
        {
          description:
            '`sample_params_mismatch`: the sample does not pass the parameter schema (stored all the same); left out when none',
        },
      ),
    ),
  }),
]);

/** The template as a write answers it. */
export function writtenResource(t: Template) {
  const warnings = templateWarnings(t);
  return warnings.length === 0 ? templateResource(t) : { ...templateResource(t), warnings };
}

const notFound = (org: string, id: string) =>
  new ApiError('not_found', { message: `Template "${id}" does not exist in organization "${org}".` });

export function registerTemplateRoutes(app: App, { store }: AppServices): void {
  app.get(
    '/organizations/:org/templates',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "List an organization's templates",
        params: OrgParams,
        response: responses({ 200: Type.Object({ items: Type.Array(Type.Ref('Template')) }) }, ADMIN_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      return { items: (await store.templates.list(org.id)).map(templateResource) };
    },
  );

  app.get(
    '/organizations/:org/templates/:id',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'One template with its content and parameter schema',
        params: TemplateParams,
        response: responses({ 200: Type.Ref('Template') }, ADMIN_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const template = await store.templates.get(org.id, request.params.id);
      if (template === undefined) throw notFound(org.id, request.params.id);
      return templateResource(template);
    },
  );

  app.put(
    '/organizations/:org/templates/:id',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Create or replace a template',
        description:
          'Replaces the whole template and takes what GET returns: content under `content` or flat, as in the ' +
          "config file; `id`, `version`, `created_at` and `updated_at` are ignored (an `id` other than the URL's is refused). " +
          `Required: ${TEMPLATE_REQUIRED.map((f) => `\`${f}\``).join(', ')} and \`html\` or \`text\`; a missing one is 400 ` +
          '`invalid_body` naming it. Left out, `name` is the id, `cc`, `bcc`, `reply_to`, `from_name` and the other of ' +
          '`html`/`text` are empty. Content fields must be valid Handlebars and the parameter schema must be satisfiable; ' +
          '`service_id` must name a service of the organization. Queued messages keep the content they were rendered with. ' +
          '`sample_params` (left out: none) is stored as given up to 64 KiB of JSON (over it: 400 `invalid_body` naming it); ' +
          'one the parameter schema refuses is stored with a `sample_params_mismatch` warning.',
        params: Type.Object({ org: LookupId, id: ResourceId }),
        body: TemplatePut,
        response: responses({ 200: TemplateWritten, 201: TemplateWritten }, ADMIN_BODY_ERRORS),
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      const id = request.params.id;
      const input = completeTemplateInput(withoutReadOnly(request.body, id));
      const { created, template } = await putTemplate(store, org.id, id, input);
      if (template === undefined) throw notFound(org.id, id);
      reply.code(created ? 201 : 200);
      return writtenResource(template);
    },
  );

  app.patch(
    '/organizations/:org/templates/:id',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Change some fields of a template',
        description:
          'Changes only the fields the body names; content fields may be given flat or under `content` and ' +
          'merge into the stored content. `params` and `sample_params` are replaced whole. Unknown fields are 400.',
        params: TemplateParams,
        body: TemplatePatch,
        response: responses({ 200: TemplateWritten }, ADMIN_BODY_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const current = await store.templates.get(org.id, request.params.id);
      if (current === undefined) throw notFound(org.id, request.params.id);
      const patch = nestContent(request.body);
      const base = mergePatch(templatePatchBase(current), patch);
      // A sample is replaced whole, as `params` is: merged, it would keep values of parameters the edit dropped.
      if (patch.sample_params !== undefined) base.sample_params = patch.sample_params;
      const merged = checkMerged(TemplatePut, base);
      const { template } = await putTemplate(store, org.id, current.id, completeTemplateInput(merged));
      if (template === undefined) throw notFound(org.id, current.id);
      return writtenResource(template);
    },
  );

  app.delete(
    '/organizations/:org/templates/:id',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Delete a template',
        params: TemplateParams,
        response: responses({ 204: NoContent }, ADMIN_ERRORS),
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      if (!(await store.templates.delete(org.id, request.params.id))) throw notFound(org.id, request.params.id);
      return reply.code(204).send();
    },
  );
}
