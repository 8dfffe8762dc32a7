import { Type } from '@sinclair/typebox';
import type { App, AppServices } from '../../http/app-types.js';
import { responses } from '../../http/schemas.js';
import type { Service } from '../../domain/types.js';
import { unlessCorrupt } from '../../storage/json.js';
import { runServiceTest, testServiceSettings } from '../service-test.js';
import { ServicePutBody } from './bodies.js';
import { ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, LookupId, requireOrganization } from './common.js';
import { ServiceParams, servicePutInput, wantedFields } from './service-fields.js';

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

/** A service form's body as PUT takes it (what GET returns, edited), with `id` naming the stored service, if any. */
const FormBody = Type.Object(
  {
    service: ServicePutBody,
    to: TestBody.properties.to,
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
    '/organizations/:org/services/test',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Test unsaved service settings (a form before it is saved)',
        description:
          'The test of POST …/services/{id}/test, run on `service`: a body as PUT takes it, stored nowhere. A secret given ' +
          'as the mask "********" is the stored one of the service `service.id` names, under the rules of PUT: only while ' +
          'what decides where it goes (`endpoint`, SMTP `host`, `port`, `user`, SES `region`, …) is unchanged; otherwise a ' +
          '400 names the secret and nothing is sent anywhere, so a stored secret never goes to a new host. A new service ' +
          '(no `id`, or one not stored) must give its secrets in full.',
        params: Type.Object({ org: LookupId }),
        body: FormBody,
        response: responses({ 200: TestResult }, [
          ...ADMIN_ERRORS,
          'bad_request',
          'invalid_body',
          'sender_not_configured',
          'provider_error',
        ]),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const { id } = request.body.service;
      const input = servicePutInput(request.body.service);
      const stored = id === undefined ? undefined : await unlessCorrupt(store.services.get(org.id, id));
      // wantedFields is PUT's own: the masks, their destinations and the provider's required block.
      const fields = wantedFields(id ?? 'unsaved', input, stored);
      const now = store.clock.now();
      const service: Service = { org_id: org.id, id: id ?? 'unsaved', ...fields, version: 0, created_at: now, updated_at: now };
      return testServiceSettings({ dataDir: config.dataDir, messageIdHost }, service, request.body.to);
    },
  );

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
        params: ServiceParams,
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
