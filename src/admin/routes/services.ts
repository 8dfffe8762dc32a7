import { Type } from '@sinclair/typebox';
import { serviceFields } from '../../config/normalize.js';
import { ResourceId, ServiceInput } from '../../config/resources.js';
import type { Service } from '../../domain/types.js';
import { ApiError } from '../../errors/api-error.js';
import type { App, AppServices } from '../../http/app-types.js';
import { responses } from '../../http/schemas.js';
import type { ServiceFields } from '../../storage/services.js';
import { putService } from '../services.js';
import {
  ADMIN_BODY_ERRORS, ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, invalidFields, LookupId, NoContent, OrgParams, requireOrganization,
} from './common.js';
import { SECRET_MASK, ServiceResource, serviceResource, smtpSettings } from './resources.js';
import { unlessCorrupt } from '../../storage/json.js';

const ServiceParams = Type.Object({ org: LookupId, id: LookupId });

const notFound = (org: string, id: string) =>
  new ApiError('not_found', { message: `Service "${id}" does not exist in organization "${org}".` });

/**
 * Normalises the body as the config file does, and puts stored secrets back where the body
 * repeats their mask, so GET → edit → PUT never stores "********" as a password.
 */
function wantedFields(input: ServiceInput, current: Service | undefined): ServiceFields {
  if (input.provider === 'smtp' && input.smtp === undefined) {
    throw invalidFields([{ field: 'smtp', message: 'is required when provider is smtp' }]);
  }
  const fields = serviceFields(input);
  const wantedSmtp = smtpSettings(fields.settings);
  if (wantedSmtp === null) return fields;
  const stored = current === undefined ? null : smtpSettings(current.settings);
  const problems: Array<{ field: string; message: string }> = [];
  if (wantedSmtp.pass === SECRET_MASK) {
    if (stored === null || stored.pass === '') problems.push({ field: 'smtp.pass', message: 'is the mask of a password that is not stored' });
    else wantedSmtp.pass = stored.pass;
  }
  if (wantedSmtp.dkim !== null && wantedSmtp.dkim.private_key === SECRET_MASK) {
    if (stored?.dkim == null) problems.push({ field: 'smtp.dkim.private_key', message: 'is the mask of a key that is not stored' });
    else wantedSmtp.dkim = { ...wantedSmtp.dkim, private_key: stored.dkim.private_key };
  }
  if (problems.length > 0) throw invalidFields(problems);
  return { ...fields, settings: { ...fields.settings, smtp: wantedSmtp } };
}

export function registerServiceRoutes(app: App, { store }: AppServices): void {
  app.get('/organizations/:org/services', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: "List an organization's email services",
      params: OrgParams,
      response: responses({ 200: Type.Object({ items: Type.Array(ServiceResource) }) }, ADMIN_ERRORS),
    },
  }, async (request) => {
    const org = await requireOrganization(store, request.params.org);
    return { items: (await store.services.list(org.id)).map(serviceResource) };
  });

  app.get('/organizations/:org/services/:id', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: 'One email service (secrets masked)',
      params: ServiceParams,
      response: responses({ 200: ServiceResource }, ADMIN_ERRORS),
    },
  }, async (request) => {
    const org = await requireOrganization(store, request.params.org);
    const service = await store.services.get(org.id, request.params.id);
    if (service === undefined) throw notFound(org.id, request.params.id);
    return serviceResource(service);
  });

  app.put('/organizations/:org/services/:id', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: 'Create or replace an email service',
      description: `Replaces the whole service. \`default: true\` clears the default flag of the others. A \`pass\` or DKIM \`private_key\` of "${SECRET_MASK}" keeps the stored one. Updating a service puts the messages held on its error (\`held_service_error\`) back in the queue.`,
      params: Type.Object({ org: LookupId, id: ResourceId }),
      body: ServiceInput,
      response: responses({ 200: ServiceResource, 201: ServiceResource }, ADMIN_BODY_ERRORS),
    },
  }, async (request, reply) => {
    const org = await requireOrganization(store, request.params.org);
    const id = request.params.id;
    const now = store.clock.now();
    const { outcome, service } = await store.transaction(async (tx) => {
      // A stored row that cannot be read is what this PUT may be fixing: it keeps no secrets.
      const fields = wantedFields(request.body, await unlessCorrupt(tx.services.get(org.id, id)));
      // As from the config file: an update may be a fix, so messages held on this service's
      // error go back to the queue.
      const { result } = await putService(tx, org.id, id, fields, now);
      return { outcome: result, service: await tx.services.get(org.id, id) };
    });
    if (service === undefined) throw notFound(org.id, id);
    reply.code(outcome === 'created' ? 201 : 200);
    return serviceResource(service);
  });

  app.delete('/organizations/:org/services/:id', {
    schema: {
      tags: ADMIN_TAGS,
      security: ADMIN_SECURITY,
      summary: 'Delete an email service',
      description: 'Templates that name it keep the name; creating a service with the same id links them again.',
      params: ServiceParams,
      response: responses({ 204: NoContent }, ADMIN_ERRORS),
    },
  }, async (request, reply) => {
    const org = await requireOrganization(store, request.params.org);
    if (!(await store.services.delete(org.id, request.params.id))) throw notFound(org.id, request.params.id);
    return reply.code(204).send();
  });
}
