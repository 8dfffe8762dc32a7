import { Type, type Static } from '@sinclair/typebox';
import type { Organization, Template } from '../domain/types.js';
import type { ErrorCode } from '../errors/catalog.js';
import { templateKey } from '../templates/params.js';
import type { Address } from '../templates/recipients.js';
import { checkParams, renderForService, resolveService, type CacheKey, type RenderCaches } from './render-step.js';
import type { Store } from '../storage/store.js';

/**
 * A send rendered and not sent (issue 15: the editor's live preview, and POST /v1/templates/{id}/render):
 * the send path's own parameter check and renderer (src/send/render-step.ts), and nothing after
 * them — no key or rate limits, no CAPTCHA, no block or suppression list, no credit, nothing stored.
 */

export const RenderBody = Type.Object({
  template_params: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'The parameters a send would carry' })),
  service_id: Type.Optional(Type.String({ maxLength: 64, description: 'As in a send: left out, the template\'s service, else the default' })),
});

const Addresses = Type.Array(Type.String(), { description: 'Each as `address` or `"Name" <address>`' });

export const RenderedTemplate = Type.Object({
  subject: Type.String(),
  html: Type.Union([Type.String(), Type.Null()], { description: 'null when the template has no HTML body' }),
  text: Type.Union([Type.String(), Type.Null()], { description: 'null when the template has no text body' }),
  from: Type.String(),
  reply_to: Addresses,
  to: Addresses,
  cc: Addresses,
  bcc: Addresses,
  service_id: Type.String({ description: 'The service a send would go through' }),
  template_version: Type.Union([Type.Integer(), Type.Null()], { description: 'The stored version rendered; null for a draft' }),
});
export type RenderedTemplate = Static<typeof RenderedTemplate>;

/** What a render can answer besides 200, as a send would (the route adds its own key or body errors). */
export const RENDER_ERRORS: readonly ErrorCode[] = [
  'invalid_body', 'payload_too_large', 'template_not_found', 'service_not_found', 'invalid_template_params',
  'template_render_failed', 'invalid_recipient', 'service_unavailable_for_template',
];

export interface PreviewDeps extends RenderCaches {
  store: Store;
}

export interface PreviewRequest {
  org: Organization;
  template: Template;
  /** Whether `template` is the stored version (cached, and its version reported) or a draft. */
  stored: boolean;
  params: Record<string, unknown>;
  serviceId: string | undefined;
}

/** JSON parameters, as /v1/send takes them. */
export async function previewSend(deps: PreviewDeps, req: PreviewRequest): Promise<RenderedTemplate> {
  const { template } = req;
  // A stored version shares the send path's cache key, so a preview warms the cache a send uses.
  const key: CacheKey = req.stored ? templateKey(template) : undefined;
  const service = await resolveService(deps.store, req.org, template, req.serviceId);
  checkParams(deps, template, key, req.params, 'json');
  const email = renderForService(deps, template, key, service, req.params);
  return {
    subject: email.subject,
    html: email.html === '' ? null : email.html,
    text: email.text === '' ? null : email.text,
    from: formatAddress(email.from),
    reply_to: email.reply_to.map(formatAddress),
    to: email.to.map(formatAddress),
    cc: email.cc.map(formatAddress),
    bcc: email.bcc.map(formatAddress),
    service_id: service.id,
    template_version: req.stored ? template.version : null,
  };
}

/** A display name is quoted when it holds a character that would end it in an address list. */
export function formatAddress(a: Address): string {
  if (a.name === '') return a.address;
  const name = /[",;<>@()\\]/.test(a.name) ? `"${a.name.replace(/["\\]/g, '\\$&')}"` : a.name;
  return `${name} <${a.address}>`;
}
