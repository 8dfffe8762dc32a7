import { Type, type Static } from '@sinclair/typebox';
import { ParamSpecInput } from '../../resources/inputs.js';
import { requirePrivateKey } from '../../domain/caller.js';
import type { Template } from '../../domain/types.js';
import { ApiError } from '../../errors/api-error.js';
import type { App, AppServices } from '../app-types.js';
import { authenticateToRead } from '../auth.js';
import { headerValue } from '../headers.js';
import { PRIVATE_KEY_ERRORS, responses, Timestamp } from '../schemas.js';
import { iso } from '../time.js';

export const TemplateResource = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    service_id: Type.Union([Type.String(), Type.Null()]),
    params: Type.Array(ParamSpecInput, { description: 'The parameter schema; every entry has a type' }),
    sample_params: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
      description: "Sample parameters for the operator UI's preview and send test, as stored; null: none",
    }),
    captcha: Type.Boolean(),
    allow_dynamic_recipients: Type.Boolean(),
    allow_attachments: Type.Boolean(),
    strict_params: Type.Boolean(),
    enforce_link_allowlist: Type.Boolean(),
    frozen: Type.Boolean(),
    content: Type.Object({
      subject: Type.String(),
      to: Type.String(),
      cc: Type.String(),
      bcc: Type.String(),
      from_name: Type.String(),
      from_email: Type.String(),
      reply_to: Type.String(),
      html: Type.String(),
      text: Type.String(),
    }),
    version: Type.Integer(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Template' },
);

export function templateResource(t: Template): Static<typeof TemplateResource> {
  return {
    id: t.id,
    name: t.name,
    service_id: t.service_id,
    params: t.params,
    sample_params: t.sample_params,
    captcha: t.captcha,
    allow_dynamic_recipients: t.allow_dynamic_recipients,
    allow_attachments: t.allow_attachments,
    strict_params: t.strict_params,
    enforce_link_allowlist: t.enforce_link_allowlist,
    frozen: t.frozen,
    content: {
      subject: t.subject,
      to: t.to,
      cc: t.cc,
      bcc: t.bcc,
      from_name: t.from_name,
      from_email: t.from_email,
      reply_to: t.reply_to,
      html: t.html,
      text: t.text,
    },
    version: t.version,
    created_at: iso(t.created_at),
    updated_at: iso(t.updated_at),
  };
}

/** GET /v1/templates and GET /v1/templates/{id}: private key only, and not a send_only one (issue 29). */
export function registerTemplates(app: App, { store }: AppServices): void {
  app.get(
    '/v1/templates',
    {
      schema: {
        tags: ['templates'],
        summary: 'List templates with their parameter schemas',
        security: [{ privateKey: [] }],
        response: responses({ 200: Type.Object({ items: Type.Array(Type.Ref('Template')) }) }, [
          ...PRIVATE_KEY_ERRORS,
          'forbidden',
          'rate_limited',
        ]),
      },
    },
    async (request) => {
      const caller = await authenticateToRead(request, store);
      requirePrivateKey(caller, headerValue(request, 'origin'));
      const items = await store.templates.list(caller.org.id);
      return { items: items.map(templateResource) };
    },
  );

  app.get(
    '/v1/templates/:id',
    {
      schema: {
        tags: ['templates'],
        summary: 'One template with its parameter schema',
        security: [{ privateKey: [] }],
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: responses({ 200: Type.Ref('Template') }, [
          ...PRIVATE_KEY_ERRORS,
          'forbidden',
          'template_not_found',
          'rate_limited',
        ]),
      },
    },
    async (request) => {
      const caller = await authenticateToRead(request, store);
      requirePrivateKey(caller, headerValue(request, 'origin'));
      // A control character (a stray NUL) names no template; PostgreSQL would refuse to look it up.
      const id = request.params.id;
      const template = /\p{Cc}/u.test(id) ? undefined : await store.templates.get(caller.org.id, id);
      if (template === undefined)
        throw new ApiError('template_not_found', { message: `Template "${id.replace(/\p{Cc}/gu, '?')}" does not exist.` });
      return templateResource(template);
    },
  );
}
