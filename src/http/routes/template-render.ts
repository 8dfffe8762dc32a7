import { Type } from '@sinclair/typebox';
import { requirePrivateKey } from '../../domain/caller.js';
import { ApiError } from '../../errors/api-error.js';
import { checkParamsSize, type SendDeps } from '../../send/accept.js';
import { previewSend, RENDER_ERRORS, RenderBody, RenderedTemplate } from '../../send/preview.js';
import type { App } from '../app-types.js';
import { authenticateToRead } from '../auth.js';
import { headerValue } from '../headers.js';
import { PRIVATE_KEY_ERRORS, responses } from '../schemas.js';

/**
 * POST /v1/templates/{id}/render: private keys only, as the other template reads. Rendered as a
 * send would be (src/send/preview.ts); not a send, so no credit, no rate-limit count, nothing stored.
 */
export function registerTemplateRender(app: App, deps: SendDeps): void {
  app.post(
    '/v1/templates/:id/render',
    {
      schema: {
        tags: ['templates'],
        summary: 'Render a template with parameters, without sending',
        description:
          'Validates `template_params` and renders subject, bodies and recipients exactly as POST /v1/send would, ' +
          "with the service's sender defaults, and answers the same 422 errors, and the same 403s a send would get once " +
          'the template is found: `plan_limit_reached` (`details.reason` `template_frozen`) for a frozen template, ' +
          '`dynamic_recipient_not_allowed`, and `link_not_allowed` (with `enforce_link_allowlist`, `details.hosts`). ' +
          'Nothing is sent or stored and no credit is used.',
        security: [{ privateKey: [] }],
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
        body: Type.Composite([RenderBody], { additionalProperties: false }),
        response: responses({ 200: RenderedTemplate }, [
          ...PRIVATE_KEY_ERRORS,
          'forbidden',
          'bad_request',
          ...RENDER_ERRORS,
          'plan_limit_reached',
          'rate_limited',
        ]),
      },
    },
    async (request) => {
      const body = request.body;
      checkParamsSize(body.template_params);
      const caller = await authenticateToRead(request, deps.store);
      requirePrivateKey(caller, headerValue(request, 'origin'));
      // A control character (a stray NUL) names no template; PostgreSQL would refuse to look it up.
      const id = request.params.id;
      const template = /\p{Cc}/u.test(id) ? undefined : await deps.store.catalog.template(caller.org.id, id);
      if (template === undefined)
        throw new ApiError('template_not_found', { message: `Template "${id.replace(/\p{Cc}/gu, '?')}" does not exist.` });
      const { rendered } = await previewSend(deps, {
        org: caller.org,
        template,
        stored: true,
        params: (body.template_params ?? {}) as Record<string, unknown>,
        serviceId: body.service_id,
        frozen: 'refuse',
      });
      return rendered;
    },
  );
}
