import type { App, AppServices } from '../../http/app-types.js';
import { responses } from '../../http/schemas.js';
import { isoOrNull } from '../../http/time.js';
import { createWebhookHttp } from '../../webhooks/http-post.js';
import { sendTestEvent } from '../../webhooks/test-event.js';
import type { WebhookHttp } from '../../webhooks/types.js';
import { graceMsOf, requireEndpoint, rotateEndpointSecret } from '../webhooks.js';
import { ADMIN_BODY_ERRORS, ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, requireOrganization } from './common.js';
import { RotateSecretBody, RotateSecretResult, TestResult, WebhookParams } from './webhook-bodies.js';

/**
 * What an operator does to one webhook endpoint beside editing it: replace its signing secret
 * (the old one signs beside the new for a grace), and send it a signed test event now.
 */
export function registerWebhookActionRoutes(app: App, services: AppServices): void {
  const { store, config } = services;

  app.post(
    '/organizations/:org/webhooks/:id/rotate-secret',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "Replace a webhook endpoint's signing secret",
        description:
          'Generates a new secret (shown this once). The old one keeps signing beside it for `grace_seconds` ' +
          '(default MAILROOM_WEBHOOK_SECRET_GRACE_SECONDS, 24 h): `webhook-signature` carries both, so receivers can switch ' +
          'without missing a request. `grace_seconds: 0` stops the old secret now.',
        params: WebhookParams,
        body: RotateSecretBody,
        response: responses({ 200: RotateSecretResult }, ADMIN_BODY_ERRORS),
      },
      // The body is optional: a bare POST means the configured grace.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const grace = request.body.grace_seconds;
      const graceMs = grace === undefined ? config.webhooks.secretGraceMs : graceMsOf(grace, 'grace_seconds');
      const rotation = await rotateEndpointSecret(store, org.id, request.params.id, graceMs);
      return { secret: rotation.secret, previous_secret_expires_at: isoOrNull(rotation.previous_secret_expires_at) };
    },
  );

  // The test event's client: the app's own, else one made on first use and closed with the app.
  let ownHttp: WebhookHttp | undefined;
  const testDeps = () => {
    if (services.webhooks !== undefined) return { store, clock: store.clock, ...services.webhooks };
    ownHttp ??= createWebhookHttp({ policy: config.webhooks.urlPolicy, timeoutMs: config.webhooks.attemptTimeoutMs });
    return { store, clock: store.clock, settings: config.webhooks, http: ownHttp };
  };
  app.addHook('onClose', async () => ownHttp?.close());

  app.post(
    '/organizations/:org/webhooks/:id/test',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Send a webhook.test event to an endpoint now',
        description:
          'Posts a signed `webhook.test` event at once, enabled or not, and answers what the receiver did: `ok` is false when ' +
          'it did not answer 2xx (the call itself still answers 200). The attempt is in the delivery log; it is not retried.',
        params: WebhookParams,
        response: responses({ 200: TestResult }, ADMIN_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const endpoint = await requireEndpoint(store, org.id, request.params.id);
      try {
        return await sendTestEvent(testDeps(), org.id, endpoint.id);
      } catch (e) {
        // Deleted between the check and the send: a 404 like any missing endpoint, never a 500.
        await requireEndpoint(store, org.id, endpoint.id);
        throw e;
      }
    },
  );
}
