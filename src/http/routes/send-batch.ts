import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { requirePrivateKey } from '../../domain/caller.js';
import { ApiError } from '../../errors/api-error.js';
import { unavailableError } from '../../errors/unavailable.js';
import { ErrorEnvelope, errorBody, type ErrorBody } from '../../errors/envelope.js';
import { acceptSend, checkParamsSize, countSendRequest, type SendDeps } from '../../send/accept.js';
import { idempotencyKeyOf, requestDigest } from '../../send/idempotency-key.js';
import { admitCaller } from '../../send/permissions.js';
import { Attachment, sendInputFromBody, stripNulls, type SendAccepted } from '../../send/request.js';
import type { App } from '../app-types.js';
import { authenticate } from '../auth.js';
import { clientInfo } from '../headers.js';
import { responses } from '../schemas.js';
import { jsonAccepted } from './send.js';

/** Spec, Limits: at most 100 messages per batch. */
export const MAX_BATCH = 100;

const BatchItem = Type.Object(
  {
    service_id: Type.Optional(Type.String({ maxLength: 64 })),
    template_id: Type.String({ minLength: 1, maxLength: 64 }),
    template_params: Type.Optional(Type.Object({}, { additionalProperties: true })),
    idempotency_key: Type.Optional(Type.String()),
    attachments: Type.Optional(Type.Array(Attachment, { maxItems: 20 })),
  },
  { additionalProperties: true },
);
const checkItem = TypeCompiler.Compile(BatchItem);

const BatchBody = Type.Object(
  {
    // Items are checked one by one below, so one malformed item fails alone.
    messages: Type.Array(Type.Object({}, { additionalProperties: true }), { minItems: 1, maxItems: MAX_BATCH }),
    accessToken: Type.Optional(Type.String({ maxLength: 300 })),
  },
  { additionalProperties: true },
);

const BatchResult = Type.Object({
  index: Type.Integer(),
  status: Type.String({ description: '`queued` or `held` when accepted; `rejected` with `error` otherwise' }),
  message_id: Type.Optional(Type.String()),
  status_token: Type.Optional(Type.String()),
  http_status: Type.Integer({ description: 'The status this item alone would have had (202 when accepted)' }),
  error: Type.Optional(ErrorEnvelope.properties.error),
});

type Result = Static<typeof BatchResult> & { error?: ErrorBody['error'] };

/**
 * POST /v1/send-batch: private key only, 1..100 messages, each accepted or refused on its own
 * (one bad item never fails the others), each with its own idempotency key (by default
 * `<Idempotency-Key header>:<index>`). The batch is one request for the per-second limits;
 * each message takes its own credit. Answers 200 with one result per item, in order.
 */
export function registerSendBatch(app: App, deps: SendDeps): void {
  const docs = deps.config.docsUrl;
  app.post(
    '/v1/send-batch',
    {
      schema: {
        tags: ['send'],
        summary: 'Send up to 100 emails, each accepted or refused on its own',
        security: [{ privateKey: [] }],
        body: BatchBody,
        response: responses({ 200: Type.Object({ results: Type.Array(BatchResult) }) }, [
          'bad_request',
          'invalid_body',
          'invalid_idempotency_key',
          'unauthorized',
          'invalid_private_key',
          'private_key_required',
          'private_key_in_browser',
          'payload_too_large',
          'rate_limited',
        ]),
      },
    },
    async (request) => {
      const caller = await authenticate(request, deps.store, request.body);
      const client = clientInfo(request);
      requirePrivateKey(caller, client.origin);
      await admitCaller(caller, client, deps.protection);
      const headerKey = idempotencyKeyOf(request.headers['idempotency-key']);
      await countSendRequest(deps, caller, client);

      const results = await Promise.all(
        request.body.messages.map(async (raw, index): Promise<Result> => {
          const item = stripNulls(raw);
          try {
            if (!checkItem.Check(item)) {
              const fields = [...checkItem.Errors(item)].map((e) => ({
                field: e.path.slice(1).replaceAll('/', '.') || 'item',
                message: e.message,
              }));
              throw new ApiError('invalid_body', { message: `Item ${index} is invalid.`, details: { fields } });
            }
            checkParamsSize(item.template_params, `messages[${index}].template_params`);
            const key =
              item.idempotency_key !== undefined
                ? idempotencyKeyOf(item.idempotency_key)
                : headerKey === undefined
                  ? undefined
                  : `${headerKey}:${index}`;
            const outcome = await acceptSend(deps, {
              caller,
              client,
              requestCounted: true,
              // Batches are private-key only, so no CAPTCHA field matters here.
              input: sendInputFromBody(item),
              idempotency: key === undefined ? undefined : { key, digest: requestDigest('/v1/send-batch#item', item) },
              respond: jsonAccepted,
            });
            const accepted = JSON.parse(outcome.response.body) as SendAccepted;
            return {
              index,
              status: accepted.status,
              message_id: accepted.message_id,
              status_token: accepted.status_token,
              http_status: outcome.response.status,
            };
          } catch (err) {
            // Storage trouble is 503 service_unavailable for the item (src/errors/unavailable.ts), not a 500.
            const trouble = err instanceof ApiError ? undefined : deps.store.health.report(err);
            const e =
              err instanceof ApiError
                ? err
                : trouble !== undefined
                  ? unavailableError(trouble)
                  : new ApiError('internal_error', { details: { request_id: request.id } });
            if (!(err instanceof ApiError) && trouble === undefined)
              request.log.error({ err, index }, 'batch item failed unexpectedly');
            return {
              index,
              status: 'rejected',
              http_status: e.status,
              error: errorBody(docs, e.code, e.message, e.details).error,
            };
          }
        }),
      );
      return { results };
    },
  );
}
