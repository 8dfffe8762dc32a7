import { Type } from '@sinclair/typebox';
import { TRANSPORTS } from '../../delivery/transports/index.js';
import { ApiError } from '../../errors/api-error.js';
import type { App, AppServices } from '../../http/app-types.js';
import { responses } from '../../http/schemas.js';
import { isEmailAddress } from '../../templates/params.js';
import { testService } from '../service-test.js';
import { ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, invalidFields, LookupId, requireOrganization } from './common.js';

const Params = Type.Object({ org: LookupId, id: LookupId });

const TestBody = Type.Object({
  to: Type.Optional(Type.String({ minLength: 3, maxLength: 254, description: 'Also send one real message ("mailroom service test", plain text) to this address through the service' })),
}, { additionalProperties: false });

const TestResult = Type.Object({
  ok: Type.Literal(true),
  latency_ms: Type.Integer({ description: "The credential check's duration" }),
  sent: Type.Optional(Type.Object({
    to: Type.String(),
    response: Type.String({ description: "The provider's answer (SMTP reply line, API status)" }),
    provider_message_id: Type.Optional(Type.String()),
    latency_ms: Type.Integer(),
  })),
});

/**
 * POST /admin/v1/organizations/{org}/services/{id}/test: checks the service's credentials
 * without sending mail (SMTP: connect, STARTTLS or TLS, AUTH, QUIT; an HTTP provider: one
 * read-only authenticated call), and with `to` sends a real test message through it. A failure
 * is the spec's 502 `provider_error` with the provider's message and `details.reason` (auth,
 * tls, connect, timeout, unverified_sender, other).
 */
export function registerServiceTestRoutes(app: App, { store, config }: AppServices): void {
  const messageIdHost = new URL(config.baseUrl).hostname || 'mailroom.local';

  app.post('/organizations/:org/services/:id/test', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: "Test an email service's credentials (and optionally send a test message)",
      description: 'Builds the service\'s transport in this process and checks its credentials without sending mail: SMTP connects, '
        + 'starts TLS (STARTTLS or `secure`), authenticates and quits; an HTTP provider makes one read-only authenticated call. '
        + 'With `to`, one real message (subject "mailroom service test", plain text, from the service\'s `from_email`) goes through '
        + 'the service and its answer is reported. A failure is 502 `provider_error` with the provider\'s message, '
        + '`details.reason` (auth, tls, connect, timeout, unverified_sender, other) and `details.stage` (build, verify, send). '
        + 'Nothing is recorded and no credit is taken.',
      params: Params,
      body: TestBody,
      response: responses({ 200: TestResult }, [...ADMIN_ERRORS, 'bad_request', 'invalid_body', 'sender_not_configured', 'provider_error']),
    },
    // No body at all (the common case: just the credential check) is the empty object.
    preValidation: async (request) => {
      if (request.body === undefined || request.body === null) request.body = {};
    },
  }, async (request) => {
    const org = await requireOrganization(store, request.params.org);
    const service = await store.services.get(org.id, request.params.id);
    if (service === undefined) throw new ApiError('not_found', { message: `Service "${request.params.id}" does not exist in organization "${org.id}".` });
    const to = request.body.to?.trim();
    if (to !== undefined && !isEmailAddress(to)) throw invalidFields([{ field: 'to', message: 'is not an e-mail address' }]);
    const fromEmail = service.settings.from_email;
    if (to !== undefined && (typeof fromEmail !== 'string' || !isEmailAddress(fromEmail))) {
      throw new ApiError('sender_not_configured', { message: `Service "${service.id}" has no from_email to send the test message from.` });
    }
    const factory = TRANSPORTS[service.provider];
    if (factory === undefined) {
      throw new ApiError('provider_error', {
        message: `Provider "${service.provider}" has no transport in this build.`,
        details: { reason: 'other', stage: 'build', provider: service.provider, service_id: service.id },
      });
    }
    const fromName = typeof service.settings.from_name === 'string' ? service.settings.from_name : '';
    const message = to === undefined || typeof fromEmail !== 'string' ? undefined : { to, from: { name: fromName, address: fromEmail }, messageIdHost };
    const outcome = await testService(factory, service, config.dataDir, message);
    if (!outcome.ok) {
      throw new ApiError('provider_error', {
        message: outcome.message.slice(0, 1000) || 'The provider refused the test.',
        details: {
          reason: outcome.reason, stage: outcome.stage, provider: service.provider, service_id: service.id,
          ...(outcome.kind !== undefined ? { kind: outcome.kind } : {}),
        },
      });
    }
    const sent = outcome.sent;
    return {
      ok: true as const,
      latency_ms: outcome.latencyMs,
      ...(sent === undefined ? {} : {
        sent: {
          to: sent.to, response: sent.response, latency_ms: sent.latencyMs,
          ...(sent.providerMessageId !== undefined ? { provider_message_id: sent.providerMessageId } : {}),
        },
      }),
    };
  });
}
