import { Type, type Static } from '@sinclair/typebox';
import { failoverProblems, storedFailover } from '../../resources/provider-settings.js';
import { ResourceId, type ServiceInput } from '../../resources/inputs.js';
import type { Service } from '../../domain/types.js';
import { HTTP_PROVIDER_NAMES, HTTP_PROVIDERS } from '../../providers/index.js';
import { smtp } from '../../providers/smtp.js';
import type { App, AppServices } from '../../http/app-types.js';
import { responses, Timestamp } from '../../http/schemas.js';
import { iso } from '../../http/time.js';
import { checkMerged, mergePatch } from '../put-patch.js';
import { putService } from '../services.js';
import { ServiceParams, servicePutInput, serviceNotFound as notFound, wantedFields } from './service-fields.js';
import { registerServiceMoveRoutes } from './service-moves.js';
import { ServicePatch, ServicePut, ServicePutBody } from './bodies.js';
import {
  ADMIN_BODY_ERRORS,
  ADMIN_ERRORS,
  ADMIN_SECURITY,
  ADMIN_TAGS,
  invalidFields,
  LookupId,
  OrgParams,
  requireOrganization,
} from './common.js';
import { SECRET_MASK, ServiceResource, serviceResource } from './resources.js';
import { providerResource, ProviderResourceFields } from './service-providers.js';
import { unlessCorrupt } from '../../storage/json.js';

/** The service's circuit breaker (issue 14, Failover), read-only: src/delivery/breaker.ts. */
const BreakerResource = Type.Object({
  state: Type.Union([Type.Literal('closed'), Type.Literal('half_open'), Type.Literal('open')], {
    description:
      'closed: messages go; open: they go through the failover chain, ' +
      'or wait; half_open: one probe message may go, its success closes it',
  }),
  opened_at: Type.Optional(Timestamp),
  consecutive_failures: Type.Integer(),
  last_error: Type.Optional(Type.String()),
});
const ShownService = Type.Composite([
  ServiceResource,
  Type.Object({ ...ProviderResourceFields, breaker: Type.Optional(BreakerResource) }),
]);

/**
 * A service's provider is fixed once it exists (issue 29): its queued and held messages, the
 * provider message ids its events are matched by and its events URL all belong to that provider.
 * Before, a PUT or PATCH naming another provider replaced it.
 */
const providerLocked = (provider: string) =>
  invalidFields([
    {
      field: 'provider',
      message:
        `cannot change on an existing service (it is ${provider}): create a service with the new provider, move the ` +
        'waiting mail to it (POST …/move-messages) and delete this one',
    },
  ]);

/** `a`, `b` or `c`, each in backticks. */
const orList = (names: readonly string[]): string =>
  names
    .map((n) => `\`${n}\``)
    .join(', ')
    .replace(/, ([^,]*)$/, ' or $1');

/**
 * For the descriptions: what, beside an `endpoint`, decides where each provider's secret goes
 * ("SES `region`, `access_key_id`; … SMTP `host`, `port`, `user`"), from the descriptors.
 */
function destinations(firstAlso: boolean): string {
  const named = [...HTTP_PROVIDERS, smtp].flatMap((p) => {
    const beyond = p.settings.destination.filter((d) => d !== 'endpoint');
    return beyond.length === 0 ? [] : [{ title: p.title, fields: beyond.map((d) => `\`${d}\``).join(', ') }];
  });
  return named.map((n, i) => `${n.title}${firstAlso && i === 0 ? ' also' : ''} ${n.fields}`).join('; ');
}

export function registerServiceRoutes(app: App, services: AppServices): void {
  const { store, config, metrics } = services;
  const eventsUrl = async (s: Service): Promise<string> =>
    `${config.baseUrl}/v1/provider-events/${(await store.services.eventsToken(s.org_id, s.id)) ?? ''}`;
  const breaker = async (s: Service): Promise<Static<typeof BreakerResource> | undefined> => {
    const v = await metrics.breakers.view?.(`${s.org_id}/${s.id}`).catch(() => undefined);
    return v === undefined
      ? undefined
      : {
          state: v.state,
          consecutive_failures: v.consecutiveFailures,
          ...(v.openedAt !== undefined ? { opened_at: iso(v.openedAt) } : {}),
          ...(v.lastError !== undefined ? { last_error: v.lastError } : {}),
        };
  };
  const show = async (s: Service): Promise<Static<typeof ShownService>> => {
    const b = await breaker(s);
    return {
      ...serviceResource(s, await eventsUrl(s)),
      ...providerResource(s.settings),
      ...(b !== undefined ? { breaker: b } : {}),
    };
  };

  app.get(
    '/organizations/:org/services',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "List an organization's email services",
        params: OrgParams,
        response: responses({ 200: Type.Object({ items: Type.Array(ShownService) }) }, ADMIN_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      return { items: await Promise.all((await store.services.list(org.id)).map(show)) };
    },
  );

  app.get(
    '/organizations/:org/services/:id',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'One email service (secrets masked)',
        params: ServiceParams,
        response: responses({ 200: ShownService }, ADMIN_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const service = await store.services.get(org.id, request.params.id);
      if (service === undefined) throw notFound(org.id, request.params.id);
      return show(service);
    },
  );

  /** Creates or replaces a service from a complete body (masks put back), in one transaction. */
  async function put(orgId: string, id: string, input: ServiceInput): Promise<{ created: boolean; service: Service }> {
    const now = store.clock.now();
    const { outcome, service } = await store.transaction(async (tx) => {
      // A stored row that cannot be read is what this PUT may be fixing: it keeps no secrets.
      const current = await unlessCorrupt(tx.services.get(orgId, id));
      if (current !== undefined && current.provider !== input.provider) throw providerLocked(current.provider);
      const fields = wantedFields(id, input, current);
      // The chain names services of this organization, and leads back to none (A → B → A).
      if (input.failover !== undefined && input.failover.length > 0) {
        const chains = new Map((await tx.services.list(orgId)).map((s) => [s.id, storedFailover(s.settings)]));
        chains.set(id, input.failover);
        const problems = failoverProblems(id, chains);
        if (problems.length > 0) throw invalidFields(problems);
      }
      // As from the config file: an update may be a fix, so messages held on this service's
      // error go back to the queue.
      const { result } = await putService(tx, orgId, id, fields, now);
      return { outcome: result, service: await tx.services.get(orgId, id) };
    });
    if (service === undefined) throw notFound(orgId, id);
    return { created: outcome === 'created', service };
  }

  app.put(
    '/organizations/:org/services/:id',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Create or replace an email service',
        description:
          `Replaces the whole service and takes what GET returns (\`id\`, \`version\`, \`created_at\`, \`updated_at\` are ` +
          `ignored; an \`id\` other than the URL's is refused). \`provider\`, \`default\` and the provider's own block ` +
          `(\`smtp\` with \`host\` and \`port\`; ${orList(HTTP_PROVIDER_NAMES)}; none for the outbox) are required, and no ` +
          `other API provider's block is taken; left-out optional settings are unset. \`failover\` names other services of ` +
          `the organization, without cycles. \`default: true\` clears the default flag of the others. A \`pass\`, DKIM ` +
          `\`private_key\`, API key, token or \`secret_access_key\` of "${SECRET_MASK}" keeps the stored one, but only ` +
          `while what decides where it goes is unchanged: a new \`endpoint\` (${destinations(true)}) with the mask is a 400 ` +
          `naming the secret: send the secret again. \`endpoint\` is https, or http to a loopback host (127.0.0.0/8, [::1], ` +
          `localhost). Updating a service puts the messages held on its error (\`held_service_error\`) back in the queue. ` +
          `The \`provider\` of an existing service cannot change: another one is a 400 naming \`provider\`.`,
        params: Type.Object({ org: LookupId, id: ResourceId }),
        body: ServicePutBody,
        response: responses({ 200: ShownService, 201: ShownService }, ADMIN_BODY_ERRORS),
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      const { created, service } = await put(org.id, request.params.id, servicePutInput(request.body, request.params.id));
      reply.code(created ? 201 : 200);
      return show(service);
    },
  );

  app.patch(
    '/organizations/:org/services/:id',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Change some settings of an email service',
        description:
          `Changes only the fields the body names; \`smtp\` and a provider's block merge into the stored ` +
          `block one level deep (\`dkim\` is replaced whole). \`provider\` cannot change (a 400 naming it). ` +
          `A stored secret is kept only while its destination is unchanged: a new \`endpoint\` ` +
          `(${destinations(false)}) must come with the secret, or it is a 400 naming it. Unknown fields are 400.`,
        params: ServiceParams,
        body: ServicePatch,
        response: responses({ 200: ShownService }, ADMIN_BODY_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const current = await store.services.get(org.id, request.params.id);
      if (current === undefined) throw notFound(org.id, request.params.id);
      const {
        id: _i,
        version: _v,
        created_at: _c,
        updated_at: _u,
        events_url: _url,
        ...base
      } = { ...serviceResource(current, ''), ...providerResource(current.settings) };
      // The provider is fixed (issue 29): a PATCH naming another one is refused before its block is looked at.
      if (request.body.provider !== undefined && request.body.provider !== current.provider)
        throw providerLocked(current.provider);
      const merged = checkMerged(ServicePut, mergePatch(base, request.body));
      return show((await put(org.id, current.id, merged)).service);
    },
  );

  app.post(
    '/organizations/:org/services/:id/events-token/rotate',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Give a service a new events URL',
        description:
          "A new random token in `events_url`; the old URL answers 404 at once. Paste the new URL into the provider's " +
          'console (events posted to the old one in between are refused, and providers retry them).',
        params: ServiceParams,
        response: responses({ 200: ShownService }, ADMIN_ERRORS),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const now = store.clock.now();
      if ((await store.services.rotateEventsToken(org.id, request.params.id, now)) === undefined)
        throw notFound(org.id, request.params.id);
      const service = await store.services.get(org.id, request.params.id);
      if (service === undefined) throw notFound(org.id, request.params.id);
      return show(service);
    },
  );

  registerServiceMoveRoutes(app, services);
}
