import { Type } from '@sinclair/typebox';
import { WebhookId } from '../../resources/webhook-inputs.js';
import type { App, AppServices } from '../../http/app-types.js';
import type { Repos } from '../../storage/store.js';
import type { WebhookEndpointFields } from '../../storage/webhook-endpoints.js';
import { responses } from '../../http/schemas.js';
import { SECRET_MASK } from '../../providers/schema.js';
import type { WebhookEndpoint } from '../../webhooks/types.js';
import { checkMerged, mergePatch, withoutReadOnly } from '../put-patch.js';
import {
  insertEndpoint,
  requireEndpoint,
  sameSecret,
  setEndpointEnabled,
  updateEndpoint,
  webhookFields,
  type WebhookCheckDeps,
} from '../webhooks.js';
import {
  ADMIN_BODY_ERRORS,
  ADMIN_ERRORS,
  ADMIN_SECURITY,
  ADMIN_TAGS,
  invalidFields,
  LookupId,
  NoContent,
  OrgParams,
  requireOrganization,
} from './common.js';
import {
  CreatedWebhookResource,
  WebhookCreate,
  WebhookPatch,
  WebhookParams,
  WebhookPut,
  WebhookResource,
  webhookResource,
} from './webhook-bodies.js';
import { registerWebhookActionRoutes } from './webhook-actions.js';
import { registerWebhookDeliveryRoutes } from './webhook-deliveries.js';

const ADMIN_CONFLICT_ERRORS = [...ADMIN_BODY_ERRORS, 'conflict' as const];

/**
 * Outbound webhook endpoints under /admin/v1/organizations/{org}/webhooks (issue 13): CRUD, an
 * operator's enable/disable, secret rotation, a test event; the delivery log and replays are in
 * webhook-deliveries.ts. The URL is checked against the production rules at every write.
 */
export function registerWebhookRoutes(app: App, services: AppServices): void {
  const { store, config } = services;
  const checks: WebhookCheckDeps = { urlPolicy: config.webhooks.urlPolicy };
  const show = (e: WebhookEndpoint) => webhookResource(e, store.clock.now());

  app.get(
    '/organizations/:org/webhooks',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "List an organization's webhook endpoints",
        params: OrgParams,
        response: responses({ 200: Type.Object({ items: Type.Array(WebhookResource) }) }, ADMIN_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      return { items: (await store.webhookEndpoints.list(org.id)).map(show) };
    },
  );

  app.post(
    '/organizations/:org/webhooks',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Register a webhook endpoint',
        description:
          '`url` is required; `events` left out or ["*"] means every event type. `id` is generated (wh_…) ' +
          'when left out. The answer carries the signing `secret` (generated unless given): it is shown this ' +
          'once. The URL must not resolve to a private, link-local or metadata address in any mode; ' +
          'production also requires https and refuses loopback (MAILROOM_WEBHOOK_ALLOW_PRIVATE=true lifts the address rules). ' +
          '`headers` are sent with every request; reads show their names and the mask, never the values.',
        params: OrgParams,
        body: WebhookCreate,
        response: responses({ 201: CreatedWebhookResource }, ADMIN_CONFLICT_ERRORS),
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      const { id, secret, ...input } = request.body;
      const { fields, problems } = await webhookFields(input, checks);
      if (problems.length > 0) throw invalidFields(problems);
      const now = store.clock.now();
      const created = await store.transaction((tx) => insertEndpoint(tx, org.id, id, fields, secret, now));
      reply.code(201);
      return { ...show(created.endpoint), secret: created.secret };
    },
  );

  app.get(
    '/organizations/:org/webhooks/:id',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'One webhook endpoint (its secret is never shown again)',
        params: WebhookParams,
        response: responses({ 200: WebhookResource }, ADMIN_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      return show(await requireEndpoint(store, org.id, request.params.id));
    },
  );

  /**
   * Writes checked settings over an endpoint read in `tx`. A `secret` in the body must be the
   * stored one (a PUT of what was created with it): compared in constant time, so answers and
   * their timing tell nothing about the stored secret.
   */
  async function overwrite(
    tx: Repos,
    current: WebhookEndpoint,
    fields: WebhookEndpointFields,
    secret: string | undefined,
    now: number,
  ) {
    if (secret !== undefined && !sameSecret(secret, current.secret)) {
      throw invalidFields([{ field: 'secret', message: 'is changed only by POST …/rotate-secret' }]);
    }
    return updateEndpoint(tx, current, fields, now);
  }

  /**
   * Checked fields of a complete body, or a 400 naming the problems (URL rules resolve names:
   * outside any transaction); header values sent as the mask keep `current`'s.
   */
  async function checkedFields(body: WebhookPut, current: WebhookEndpoint | undefined): Promise<WebhookEndpointFields> {
    const { fields, problems } = await webhookFields(body, checks, current);
    if (problems.length > 0) throw invalidFields(problems);
    return fields;
  }

  /** Creates (201, with the secret) or replaces (200) from a complete body, in one transaction. */
  async function put(
    orgId: string,
    id: string,
    body: WebhookPut,
  ): Promise<{ created: boolean; endpoint: WebhookEndpoint; secret?: string }> {
    const fields = await checkedFields(body, await store.webhookEndpoints.get(orgId, id));
    const now = store.clock.now();
    return store.transaction(async (tx) => {
      const current = await tx.webhookEndpoints.get(orgId, id);
      if (current === undefined) {
        const created = await insertEndpoint(tx, orgId, id, fields, body.secret, now);
        return { created: true, ...created };
      }
      return { created: false, endpoint: await overwrite(tx, current, fields, body.secret, now) };
    });
  }

  app.put(
    '/organizations/:org/webhooks/:id',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Create or replace a webhook endpoint',
        description:
          "Takes what GET returns (read-only fields ignored; an `id` other than the URL's is refused). `url`, `events` and " +
          '`enabled` are required. Creating answers 201 with the `secret`; `enabled: true` ' +
          'on a disabled endpoint re-enables it (clears `disabled_reason` and `failing_since`). ' +
          `\`headers\` left out means none; a value of "${SECRET_MASK}" keeps the stored value of that header while the URL's ` +
          'origin is unchanged (a new host needs the values sent again).',
        params: Type.Object({ org: LookupId, id: WebhookId }),
        body: WebhookPut,
        response: responses({ 200: WebhookResource, 201: CreatedWebhookResource }, ADMIN_CONFLICT_ERRORS),
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      const {
        secret_hint: _h,
        disabled_reason: _d,
        failing_since: _f,
        previous_secret_expires_at: _p,
        ...body
      } = withoutReadOnly(request.body, request.params.id);
      const result = await put(org.id, request.params.id, body);
      reply.code(result.created ? 201 : 200);
      return result.secret === undefined ? show(result.endpoint) : { ...show(result.endpoint), secret: result.secret };
    },
  );

  app.patch(
    '/organizations/:org/webhooks/:id',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Change some settings of a webhook endpoint',
        description:
          'Changes only the fields the body names. `{"enabled": true}` re-enables an endpoint that was disabled ' +
          '(410 Gone, failing for days, or an operator): it clears `disabled_reason` and `failing_since`. ' +
          `\`headers\` replaces the whole list; a value of "${SECRET_MASK}" keeps the stored one while the URL's origin is ` +
          'unchanged, and a URL to another origin needs the values sent again (or `headers: []`).',
        params: WebhookParams,
        body: WebhookPatch,
        response: responses({ 200: WebhookResource }, ADMIN_BODY_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const current = await requireEndpoint(store, org.id, request.params.id);
      // `headers` left out keeps the stored ones: the read's masks stand for them.
      const { url, events, enabled, description, headers } = show(current);
      const fields = await checkedFields(
        checkMerged(WebhookPut, mergePatch({ url, events, enabled, description, headers }, request.body)),
        current,
      );
      const now = store.clock.now();
      // Update only: an endpoint deleted since it was read is a 404, never created again.
      return show(
        await store.transaction(async (tx) =>
          overwrite(tx, await requireEndpoint(tx, org.id, current.id), fields, undefined, now),
        ),
      );
    },
  );

  app.delete(
    '/organizations/:org/webhooks/:id',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Delete a webhook endpoint and its delivery log',
        params: WebhookParams,
        response: responses({ 204: NoContent }, ADMIN_ERRORS),
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      if (!(await store.webhookEndpoints.delete(org.id, request.params.id)))
        await requireEndpoint(store, org.id, request.params.id);
      return reply.code(204).send();
    },
  );

  for (const [action, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    app.post(
      `/organizations/:org/webhooks/:id/${action}`,
      {
        schema: {
          tags: ADMIN_TAGS,
          security: ADMIN_SECURITY,
          summary: enabled
            ? 'Re-enable a webhook endpoint (same as PATCH {"enabled": true})'
            : 'Disable a webhook endpoint (same as PATCH {"enabled": false})',
          params: WebhookParams,
          response: responses({ 200: WebhookResource }, ADMIN_ERRORS),
        },
      },
      async (request) => {
        const org = await requireOrganization(store, request.params.org);
        return show(await setEndpointEnabled(store, org.id, request.params.id, enabled));
      },
    );
  }

  registerWebhookActionRoutes(app, services);
  registerWebhookDeliveryRoutes(app, services);
}
