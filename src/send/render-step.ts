import type { Lru } from '../domain/lru.js';
import type { Organization, Service, Template } from '../domain/types.js';
import { ApiError } from '../errors/api-error.js';
import { checkLinks } from '../protection/links.js';
import type { Store } from '../storage/store.js';
import { compileParamsValidator, type ParamsSource, type ParamsValidator } from '../templates/params.js';
import { compileTemplate, renderEmail, type RenderedEmail } from '../templates/render.js';

/**
 * Step 4's lookups and step 5's parameter check, rendering and link check, shared by a send
 * (src/send/accept.ts) and a render without sending (src/send/preview.ts), so a preview is
 * rendered and refused exactly as the send would be: the same validator, the same renderer, the
 * same recipient parsing and sender defaults, the same frozen and link refusals.
 */

/** The compiled code of each template version, kept by the send path (createSendDeps). */
export interface RenderCaches {
  validators: Lru<ParamsValidator>;
  renderers: Lru<ReturnType<typeof compileTemplate>>;
}

/**
 * A cache key (templateKey) for a stored version, or undefined for a template no stored version
 * matches (an editor's draft, a send test's recipient): compiled for this call only, because under
 * the stored version's key it would be served to later sends.
 */
export type CacheKey = string | undefined;

const cached = <T>(cache: Lru<T>, key: CacheKey, make: () => T): T => (key === undefined ? make() : cache.getOrCreate(key, make));

/** The stored template, or 404 `template_not_found`. */
export async function findTemplate(store: Store, orgId: string, id: string): Promise<Template> {
  const template = await store.catalog.template(orgId, id);
  if (template === undefined) throw new ApiError('template_not_found', { message: `Template "${id}" does not exist.` });
  return template;
}

export const FROZEN_MESSAGE = 'This template is frozen after a plan downgrade.';

/** Step 4: a template frozen after a plan downgrade sends nothing until it is unfrozen (403). */
export function checkNotFrozen(template: Template): void {
  if (template.frozen)
    throw new ApiError('plan_limit_reached', { message: FROZEN_MESSAGE, details: { reason: 'template_frozen' } });
}

/** Step 5, first half: 422 `invalid_template_params` with one issue per failing parameter. */
export function checkParams(
  caches: RenderCaches,
  template: Template,
  key: CacheKey,
  params: Record<string, unknown>,
  source: ParamsSource,
): void {
  const validate = cached(caches.validators, key, () => compileParamsValidator(template.params, template.strict_params));
  const issues = validate(params, source);
  if (issues.length > 0) throw new ApiError('invalid_template_params', { details: { issues } });
}

/** Step 5, second half: every field rendered, addresses parsed, the service's From as the default sender. */
export function renderForService(
  caches: RenderCaches,
  template: Template,
  key: CacheKey,
  service: Service,
  params: Record<string, unknown>,
): RenderedEmail {
  const compiled = cached(caches.renderers, key, () => compileTemplate(template));
  return renderEmail(compiled, template, params, {
    from_email: stringSetting(service.settings.from_email),
    from_name: stringSetting(service.settings.from_name),
  });
}

/**
 * Step 5, after rendering: 403 `link_not_allowed` (checkLinks) when the email links outside the
 * organization's link domains, for a template with `enforce_link_allowlist` and for every locked
 * send (a public key and a dynamic recipient: Authentication rule 10).
 */
export function checkRenderedLinks(org: Organization, template: Template, email: RenderedEmail, locked: boolean): void {
  if (locked || template.enforce_link_allowlist) checkLinks(email, org.security.link_domains);
}

function stringSetting(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * `service_id` omitted or `default_service`: the template's service, else the organization's
 * default. A template linked to a service that no longer exists cannot send (422).
 */
export async function resolveService(
  store: Store,
  org: Organization,
  template: Template,
  requested: string | undefined,
): Promise<Service> {
  if (template.service_id !== null && (requested === undefined || requested === '' || requested === 'default_service')) {
    const linked = await store.catalog.service(org.id, template.service_id);
    if (linked === undefined) {
      throw new ApiError('service_unavailable_for_template', {
        message: `The template's service "${template.service_id}" no longer exists.`,
        details: { reason: 'service_deleted' },
      });
    }
    return linked;
  }
  return serviceByIdOrDefault(store, org, requested);
}

/**
 * The service named (`default_service`, '' and undefined name none), else the organization's
 * default: resolveService without a template, as a submitted message (SMTP, issue 28) has none.
 */
export async function serviceByIdOrDefault(store: Store, org: Organization, requested: string | undefined): Promise<Service> {
  if (requested !== undefined && requested !== '' && requested !== 'default_service') {
    const service = await store.catalog.service(org.id, requested);
    if (service === undefined) throw new ApiError('service_not_found', { message: `Service "${requested}" does not exist.` });
    return service;
  }
  const fallback = await store.catalog.defaultService(org.id);
  if (fallback === undefined)
    throw new ApiError('service_not_found', { message: 'No service_id was given and the organization has no default service.' });
  return fallback;
}
