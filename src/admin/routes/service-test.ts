import { Type } from '@sinclair/typebox';
import type { App, AppServices } from '../../http/app-types.js';
import { responses } from '../../http/schemas.js';
import { runServiceTest } from '../service-test.js';
import { ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, LookupId } from './common.js';

const Params = Type.Object({ org: LookupId, id: LookupId });

const TestBody = Type.Object(
  {
    to: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: 254,
        description: 'Also send one real message ("mailroom service test", plain text) to this address through the service',
      }),
    ),
  },
  { additionalProperties: false },
);

const TestResult = Type.Object({
  ok: Type.Literal(true),
  latency_ms: Type.Integer({ description: "The credential check's duration" }),
  sent: Type.Optional(
    Type.Object({
      to: Type.String(),
      response: Type.String({ description: "The provider's answer (SMTP reply line, API status)" }),
      provider_message_id: Type.Optional(Type.String()),
      latency_ms: Type.Integer(),
    }),
  ),
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

  app.post(
    '/organizations/:org/services/:id/test',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "Test an email service's credentials (and optionally send a test message)",
        description:
          "Builds the service's transport in this process and checks its credentials without sending mail: SMTP connects, " +
          'starts TLS (STARTTLS or `secure`), authenticates and quits; an HTTP provider ' +
          'makes one read-only authenticated call. With `to`, one real message (subject ' +
          '"mailroom service test", plain text, from the service\'s `from_email`) goes through ' +
          "the service and its answer is reported. A failure is 502 `provider_error` with the provider's message, " +
          '`details.reason` (auth, tls, connect, timeout, unverified_sender, other) and `details.stage` (build, verify, send). ' +
          'Nothing is recorded and no credit is taken.',
        params: Params,
        body: TestBody,
        response: responses({ 200: TestResult }, [
          ...ADMIN_ERRORS,
          'bad_request',
          'invalid_body',
          'sender_not_configured',
          'provider_error',
        ]),
      },
      // No body at all (the common case: just the credential check) is the empty object.
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
    },
    async (request) =>
      runServiceTest({ store, dataDir: config.dataDir, messageIdHost }, request.params.org, request.params.id, request.body.to),
  );
}
