import { Type } from '@sinclair/typebox';
import { ApiError } from '../../errors/api-error.js';
import type { App } from '../../http/app-types.js';
import { responses } from '../../http/schemas.js';
import { checkParamsSize, type SendDeps } from '../../send/accept.js';
import { previewSend, RENDER_ERRORS, RenderBody, RenderedTemplate, RenderWarning } from '../../send/preview.js';
import { withoutReadOnly } from '../put-patch.js';
import { draftTemplate } from '../templates.js';
import { TemplatePut } from './bodies.js';
import { ADMIN_BODY_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, LookupId, requireOrganization } from './common.js';

const AdminRenderBody = Type.Composite(
  [
    RenderBody,
    Type.Object({
      // Unsaved edits: any fields a template PUT takes (all optional here).
      template: Type.Optional(TemplatePut),
    }),
  ],
  { additionalProperties: false },
);

const AdminRendered = Type.Composite([
  RenderedTemplate,
  Type.Object({
    warnings: Type.Array(RenderWarning, {
      description: 'What a send of this template would meet though the preview renders it; empty when none',
    }),
  }),
]);

/** POST /admin/v1/organizations/{org}/templates/{id}/render: the editor's live preview (issue 15). */
export function registerTemplateRenderRoutes(app: App, deps: SendDeps): void {
  app.post(
    '/organizations/:org/templates/:id/render',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Render a template as a send would, without sending',
        description:
          'The same parameter validation, renderer, recipient parsing and service sender defaults as a send, ' +
          'with the same 422 `invalid_template_params` issues; nothing is stored and no credit is used. With `template`, ' +
          'those fields override the stored template, or stand alone when `{id}` is not stored yet (missing fields take ' +
          'the PUT defaults); a draft a PUT would refuse is refused the same way (400 `invalid_body` naming the field). ' +
          '404 `template_not_found` when the template is neither stored nor drafted. Refused as a send is: 403 ' +
          '`link_not_allowed` (with `enforce_link_allowlist`, `details.hosts`) and 403 `dynamic_recipient_not_allowed`. ' +
          'A frozen template (`frozen`, after a plan downgrade) still renders, so the operator can see and fix it, with ' +
          '`warnings: [{"code": "template_frozen", …}]`: a send of it is refused with 403 `plan_limit_reached`. ' +
          "`template_params` left out: the template's `sample_params` (the draft's when it names them), or none.",
        params: Type.Object({ org: LookupId, id: LookupId }),
        body: AdminRenderBody,
        response: responses({ 200: AdminRendered }, [...ADMIN_BODY_ERRORS, ...RENDER_ERRORS]),
      },
    },
    async (request) => {
      const { id } = request.params;
      const body = request.body;
      checkParamsSize(body.template_params);
      const org = await requireOrganization(deps.store, request.params.org);
      const stored = await deps.store.catalog.template(org.id, id);
      const template =
        body.template === undefined
          ? stored
          : await draftTemplate(deps.store, org.id, id, stored, withoutReadOnly(body.template, id));
      if (template === undefined)
        throw new ApiError('template_not_found', { message: `Template "${id}" does not exist in organization "${org.id}".` });
      const { rendered, warnings } = await previewSend(deps, {
        org,
        template,
        stored: body.template === undefined,
        params: (body.template_params ?? template.sample_params ?? {}) as Record<string, unknown>,
        serviceId: body.service_id,
        frozen: 'warn',
      });
      return { ...rendered, warnings };
    },
  );
}
