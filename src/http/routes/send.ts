import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { acceptSend, checkParamsSize, type SendDeps } from '../../send/accept.js';
import { idempotencyKeyOf, requestDigest } from '../../send/idempotency-key.js';
import { admitCaller } from '../../send/permissions.js';
import { SendBody, sendInputFromBody, stripNulls, type SendAccepted } from '../../send/request.js';
import type { StoredResponse } from '../../storage/idempotency.js';
import type { App } from '../app-types.js';
import { authenticate } from '../auth.js';
import { clientInfo } from '../headers.js';
import { responses } from '../schemas.js';

export const SEND_ERRORS = [
  'bad_request',
  'invalid_body',
  'invalid_idempotency_key',
  'unauthorized',
  'insufficient_credits',
  'forbidden',
  'not_found',
  'idempotency_conflict',
  'payload_too_large',
  'invalid_template_params',
  'rate_limited',
  'recipient_suppressed',
  // CAPTCHA verifier or rate-limit store unreachable (public keys fail closed).
  'service_unavailable',
] as const;

/** 202 with the JSON body: what /v1/send and JSON-asking clients of the alias get. */
export function jsonAccepted(a: SendAccepted): StoredResponse {
  return {
    status: 202,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-mail-message-id': a.message_id, 'x-mail-status': a.status },
    body: JSON.stringify(a),
  };
}

/** 200 `OK` in plain text: what EmailJS's SDKs expect from the legacy alias. */
export function legacyAccepted(a: SendAccepted): StoredResponse {
  return {
    status: 200,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'x-mail-message-id': a.message_id, 'x-mail-status': a.status },
    body: 'OK',
  };
}

/**
 * On the alias, JSON only for clients that ask for it: they send X-Mail-Client, or an Accept
 * that names application/json without also taking text/plain or anything (`*\/*`, which is
 * what browsers' fetch sends by default, as EmailJS's SDK does).
 */
export function wantsJson(request: FastifyRequest): boolean {
  if (request.headers['x-mail-client'] !== undefined) return true;
  const accept = String(request.headers.accept ?? '').toLowerCase();
  // Media ranges the client accepts; `;q=0` means "not acceptable" (RFC 9110 12.4.2).
  const types = accept.split(',').flatMap((part) => {
    const [type = '', ...params] = part.split(';').map((p) => p.trim());
    const q = params.find((p) => p.startsWith('q='));
    return q !== undefined && Number(q.slice(2)) === 0 ? [] : [type];
  });
  return (
    types.includes('application/json') && !types.includes('text/plain') && !types.includes('*/*') && !types.includes('text/*')
  );
}

export function sendStored(reply: FastifyReply, response: StoredResponse): FastifyReply {
  return reply.code(response.status).headers(response.headers).send(response.body);
}

/** POST /v1/send and its legacy alias POST /api/v1.0/email/send. */
export function registerSend(app: App, deps: SendDeps): void {
  for (const [url, legacy] of [
    ['/v1/send', false],
    ['/api/v1.0/email/send', true],
  ] as const) {
    app.post(
      url,
      {
        schema: {
          tags: ['send'],
          summary: legacy ? 'Legacy-compatible alias of POST /v1/send (EmailJS request shape)' : 'Send one email from a template',
          description: legacy
            ? 'Answers 200 text/plain `OK` unless the client sends ' +
              'X-Mail-Client or asks for application/json only; then as /v1/send.'
            : undefined,
          security: [{ publicKey: [] }, { privateKey: [] }],
          body: SendBody,
          response: responses(
            legacy
              ? { 200: Type.String({ description: 'OK' }), 202: Type.Ref('SendAccepted') }
              : { 202: Type.Ref('SendAccepted') },
            SEND_ERRORS,
          ),
        },
        preValidation: async (request) => {
          request.body = stripNulls(request.body) as typeof request.body;
        },
      },
      async (request, reply) => {
        const body = request.body;
        // In the send path's order (README, Design): the body (1), the key and its rules (2), idempotency (3).
        checkParamsSize(body.template_params);
        const caller = await authenticate(request, deps.store, body);
        const client = clientInfo(request);
        await admitCaller(caller, client, deps.protection);
        const idempotencyKey = idempotencyKeyOf(request.headers['idempotency-key']);
        const outcome = await acceptSend(deps, {
          caller,
          client,
          input: sendInputFromBody(body),
          idempotency: idempotencyKey === undefined ? undefined : { key: idempotencyKey, digest: requestDigest(url, body) },
          respond: legacy && !wantsJson(request) ? legacyAccepted : jsonAccepted,
        });
        return sendStored(reply, outcome.response);
      },
    );
  }
}
