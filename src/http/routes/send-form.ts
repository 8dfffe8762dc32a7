import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { PLAN_ATTACHMENT_LIMIT } from '../../attachments/policy.js';
import { ApiError } from '../../errors/api-error.js';
import { acceptSend, checkParamsSize, type SendDeps } from '../../send/accept.js';
import { idempotencyKeyOf, requestDigest } from '../../send/idempotency-key.js';
import { admitCaller } from '../../send/permissions.js';
import type { SendInput } from '../../send/request.js';
import type { App } from '../app-types.js';
import { authenticate } from '../auth.js';
import { readForm, type ParsedForm } from '../form-reader.js';
import { noteRequestFields } from '../refused-fields.js';
import { clientInfo } from '../headers.js';
import { responses } from '../schemas.js';
import { jsonAccepted, legacyAccepted, SEND_ERRORS, sendStored, wantsJson } from './send.js';

function field(form: ParsedForm, name: string, max: number): string | undefined {
  const v = form.reserved.get(name);
  if (v === undefined || v === '') return undefined;
  if (v.length > max)
    throw new ApiError('invalid_body', {
      message: `${name} is longer than ${max} characters.`,
      details: { fields: [{ field: name, message: `must be at most ${max} characters` }] },
    });
  return v;
}

/** POST /v1/send-form and its legacy alias POST /api/v1.0/email/send-form (multipart/form-data). */
export function registerSendForm(app: App, deps: SendDeps): void {
  const largestAllowance = Math.max(...Object.values(PLAN_ATTACHMENT_LIMIT));
  /**
   * The attachment allowance files are read against. A key in the headers names the plan before
   * any byte of the body is read; a key in the body (EmailJS's sendForm appends user_id last)
   * comes too late, and the largest plan's allowance holds until acceptance checks the total
   * again. A bad header key is not refused here: that stays the send path's answer, in order.
   */
  const allowanceFor = async (request: FastifyRequest): Promise<number> => {
    const caller = await authenticate(request, deps.store).catch(() => undefined);
    return caller === undefined ? largestAllowance : PLAN_ATTACHMENT_LIMIT[caller.org.plan];
  };
  app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    await scope.register(multipart);
    for (const [url, legacy] of [
      ['/v1/send-form', false],
      ['/api/v1.0/email/send-form', true],
    ] as const) {
      scope.post(
        url,
        {
          schema: {
            tags: ['send'],
            summary: legacy ? 'Legacy-compatible alias of POST /v1/send-form' : 'Send one email from multipart/form-data',
            description:
              'Reserved fields: service_id, template_id, user_id, accessToken, ' +
              'cf-turnstile-response, turnstile_token, turnstile_key. Every other text field ' +
              'is a template parameter (repeated names joined with ", "); every file field is an attachment.',
            consumes: ['multipart/form-data'],
            security: [{ publicKey: [] }, { privateKey: [] }],
            response: responses(
              legacy
                ? { 200: Type.String({ description: 'OK' }), 202: Type.Ref('SendAccepted') }
                : { 202: Type.Ref('SendAccepted') },
              SEND_ERRORS,
            ),
          },
        },
        async (request, reply) => {
          if (!request.isMultipart()) throw new ApiError('bad_request', { message: 'This endpoint takes multipart/form-data.' });
          const form = await readForm(request, { bodyBytes: deps.config.bodyLimitBytes, fileBytes: await allowanceFor(request) });
          noteRequestFields(request, {
            template_id: form.reserved.get('template_id'),
            service_id: form.reserved.get('service_id'),
            template_params: form.params,
            attachments: form.files,
          });
          checkParamsSize(form.params);
          const templateId = field(form, 'template_id', 64);
          if (templateId === undefined)
            throw new ApiError('invalid_body', {
              message: 'template_id is required.',
              details: { fields: [{ field: 'template_id', message: 'is required' }] },
            });
          const turnstileKey = field(form, 'turnstile_key', 10);
          if (turnstileKey !== undefined && turnstileKey !== 'org' && turnstileKey !== 'mail') {
            throw new ApiError('invalid_body', {
              message: 'turnstile_key must be org or mail.',
              details: { fields: [{ field: 'turnstile_key', message: 'must be org or mail' }] },
            });
          }
          const input: SendInput = {
            service_id: field(form, 'service_id', 64),
            template_id: templateId,
            template_params: form.params,
            params_source: 'form',
            turnstile_token: field(form, 'turnstile_token', 4096) ?? field(form, 'cf-turnstile-response', 4096),
            turnstile_key: turnstileKey,
            attachments: form.files,
          };
          const caller = await authenticate(request, deps.store, {
            user_id: field(form, 'user_id', 200),
            accessToken: field(form, 'accessToken', 300),
          });
          const client = clientInfo(request);
          await admitCaller(caller, client, deps.protection);
          const idempotencyKey = idempotencyKeyOf(request.headers['idempotency-key']);
          const outcome = await acceptSend(deps, {
            caller,
            client,
            input,
            idempotency:
              idempotencyKey === undefined ? undefined : { key: idempotencyKey, digest: requestDigest(url, form.digestSource) },
            respond: legacy && !wantsJson(request) ? legacyAccepted : jsonAccepted,
          });
          return sendStored(reply, outcome.response);
        },
      );
    }
  });
}
