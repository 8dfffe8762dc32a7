import { Type } from '@sinclair/typebox';
import type { Caller } from '../../domain/caller.js';
import type { Organization } from '../../domain/types.js';
import type { App } from '../../http/app-types.js';
import { clientInfo } from '../../http/headers.js';
import { SEND_ERRORS } from '../../http/routes/send.js';
import { responses } from '../../http/schemas.js';
import { acceptSend, checkParamsSize, type SendDeps } from '../../send/accept.js';
import type { SendAccepted } from '../../send/request.js';
import { RENDER_ERRORS } from '../../send/preview.js';
import type { StoredResponse } from '../../storage/idempotency.js';
import { isEmailAddress } from '../../templates/params.js';
import { ADMIN_BODY_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, invalidFields, LookupId, requireOrganization } from './common.js';

const SendTestBody = Type.Object(
  {
    to: Type.String({ minLength: 3, maxLength: 254, description: 'The one address the test goes to' }),
    template_params: Type.Optional(Type.Object({}, { additionalProperties: true })),
    service_id: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);

const SendTestAccepted = Type.Object({
  message_id: Type.String(),
  status: Type.Union([Type.Literal('queued'), Type.Literal('held')]),
});

/**
 * The admin API sends as the organization's private key would: the same credit, limits and
 * history, with key_type `private`. No key row stands behind it; this one only names the
 * admin in the key limit's counter.
 */
function adminCaller(org: Organization, now: number): Caller {
  return {
    org,
    key: {
      id: 'admin-send-test',
      org_id: org.id,
      type: 'private',
      mode: 'live',
      public_key: null,
      hint: 'admin',
      status: 'active',
      created_at: now,
      revoked_at: null,
      expires_at: null,
      name: null,
      scope: 'full',
      last_used_at: null,
      created_by: 'admin',
    },
  };
}

const accepted = (a: SendAccepted): StoredResponse => ({
  status: 202,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body: JSON.stringify({ message_id: a.message_id, status: a.status }),
});

/** POST /admin/v1/organizations/{org}/templates/{id}/send-test (issue 15: the editor's "Send test"). */
export function registerTemplateSendTestRoutes(app: App, deps: SendDeps): void {
  app.post(
    '/organizations/:org/templates/:id/send-test',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Send a template to one test address',
        description:
          'A real message through the send path (credit, suppression and block list, history, delivery, timeline), ' +
          "as a private-key send, addressed to `to` only: the template's To, Cc and Bcc are left out. Answers the errors a " +
          'send answers (422 `invalid_template_params` with the same issues). `template_params` left out: the stored ' +
          "template's `sample_params` (issue 29), or none.",
        params: Type.Object({ org: LookupId, id: LookupId }),
        body: SendTestBody,
        response: responses({ 202: SendTestAccepted }, [...ADMIN_BODY_ERRORS, ...SEND_ERRORS, ...RENDER_ERRORS]),
      },
    },
    async (request, reply) => {
      const body = request.body;
      checkParamsSize(body.template_params);
      const to = body.to.trim();
      // Written into the template's To field, so no Handlebars may come with it.
      if (!isEmailAddress(to) || /[{}]/.test(to)) throw invalidFields([{ field: 'to', message: 'must be one e-mail address' }]);
      const org = await requireOrganization(deps.store, request.params.org);
      const params = body.template_params ?? (await deps.store.catalog.template(org.id, request.params.id))?.sample_params ?? {};
      const outcome = await acceptSend(deps, {
        caller: adminCaller(org, deps.clock.now()),
        client: clientInfo(request),
        input: {
          service_id: body.service_id,
          template_id: request.params.id,
          template_params: params as Record<string, unknown>,
          params_source: 'json',
          turnstile_token: undefined,
          turnstile_key: undefined,
          attachments: [],
        },
        idempotency: undefined,
        respond: accepted,
        testRecipient: to,
      });
      return reply.code(outcome.response.status).headers(outcome.response.headers).send(outcome.response.body);
    },
  );
}
