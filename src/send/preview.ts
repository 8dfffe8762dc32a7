import { Type, type Static } from '@sinclair/typebox';
import type { Organization, Template } from '../domain/types.js';
import type { Lru } from '../domain/lru.js';
import type { ErrorCode } from '../errors/catalog.js';
import { analyseTemplate, checkTemplateLock, type TemplateShape } from '../protection/dynamic-lock.js';
import { templateKey } from '../templates/params.js';
import { renderedView, RenderedView } from '../templates/rendered-view.js';
import {
  checkNotFrozen,
  checkParams,
  checkRenderedLinks,
  FROZEN_MESSAGE,
  renderForService,
  resolveService,
  type CacheKey,
  type RenderCaches,
} from './render-step.js';
import type { Store } from '../storage/store.js';

/**
 * A send rendered and not sent (issue 15: the editor's live preview, and POST /v1/templates/{id}/render):
 * the send path's own frozen refusal, parameter check, renderer and link check (src/send/render-step.ts),
 * and nothing else — no key or rate limits, no CAPTCHA, no block or suppression list (they depend on who
 * sends, to whom, when: not on the template), no credit, nothing stored.
 */

export const RenderBody = Type.Object({
  template_params: Type.Optional(
    Type.Object({}, { additionalProperties: true, description: 'The parameters a send would carry' }),
  ),
  service_id: Type.Optional(
    Type.String({ maxLength: 64, description: "As in a send: left out, the template's service, else the default" }),
  ),
});

export const RenderedTemplate = Type.Composite([
  RenderedView,
  Type.Object({
    service_id: Type.String({ description: 'The service a send would go through' }),
    template_version: Type.Union([Type.Integer(), Type.Null()], { description: 'The stored version rendered; null for a draft' }),
    recipients: Type.Array(
      Type.Object({
        address: Type.String(),
        kind: Type.Union([Type.Literal('to'), Type.Literal('cc'), Type.Literal('bcc')]),
      }),
      {
        description:
          'Every address the send would deliver to, To then Cc then Bcc, without display names, as the message detail lists them',
      },
    ),
  }),
]);
export type RenderedTemplate = Static<typeof RenderedTemplate>;

/** Something a send of this template would meet that a preview renders anyway (the admin editor's). */
export const RenderWarning = Type.Object({
  code: Type.Union([Type.Literal('template_frozen')], {
    description:
      '`template_frozen`: a send of this template is refused (403 `plan_limit_reached`, `details.reason` `template_frozen`)',
  }),
  message: Type.String(),
});
export type RenderWarning = Static<typeof RenderWarning>;

/** What a render can answer besides 200, as a send would (the route adds its own key or body errors). */
export const RENDER_ERRORS: readonly ErrorCode[] = [
  'invalid_body',
  'payload_too_large',
  'template_not_found',
  'service_not_found',
  'invalid_template_params',
  'template_render_failed',
  'invalid_recipient',
  'service_unavailable_for_template',
  'dynamic_recipient_not_allowed',
  'link_not_allowed',
];

export interface PreviewDeps extends RenderCaches {
  store: Store;
  /** The send path's (SendDeps.shapes): what the dynamic-recipient lock knows of each stored version. */
  shapes: Lru<TemplateShape>;
}

export interface PreviewRequest {
  org: Organization;
  template: Template;
  /** Whether `template` is the stored version (cached, and its version reported) or a draft. */
  stored: boolean;
  params: Record<string, unknown>;
  serviceId: string | undefined;
  /**
   * A frozen template: `refuse` as a send does (the /v1 render, what a client would send), or
   * `warn`: render it with a `template_frozen` warning (the admin editor, where the operator
   * must still see and fix the template a plan downgrade froze).
   */
  frozen: 'refuse' | 'warn';
}

export interface Preview {
  rendered: RenderedTemplate;
  warnings: RenderWarning[];
}

/**
 * JSON parameters, as /v1/send takes them; refused where a send of a private key is refused
 * from the template lookup to the rendered links (step 4 and 5 of accept.ts, in its order).
 */
export async function previewSend(deps: PreviewDeps, req: PreviewRequest): Promise<Preview> {
  const { org, template } = req;
  if (req.frozen === 'refuse') checkNotFrozen(template);
  // A stored version shares the send path's cache key, so a preview warms the cache a send uses.
  const key: CacheKey = req.stored ? templateKey(template) : undefined;
  const service = await resolveService(deps.store, org, template, req.serviceId);
  // A private-key send's part of the dynamic-recipient lock: a recipient built from parameters
  // needs allow_dynamic_recipients (neither render takes a public key, so no send it previews is locked).
  const shape = key === undefined ? analyseTemplate(template) : deps.shapes.getOrCreate(key, () => analyseTemplate(template));
  checkTemplateLock(template, shape, 'private');
  checkParams(deps, template, key, req.params, 'json');
  const email = renderForService(deps, template, key, service, req.params);
  checkRenderedLinks(org, template, email, false);
  const warnings: RenderWarning[] = template.frozen
    ? [{ code: 'template_frozen', message: `${FROZEN_MESSAGE} A send of it is refused (403 plan_limit_reached).` }]
    : [];
  return {
    rendered: {
      ...renderedView(email),
      service_id: service.id,
      template_version: req.stored ? template.version : null,
      recipients: (['to', 'cc', 'bcc'] as const).flatMap((kind) => email[kind].map((a) => ({ address: a.address, kind }))),
    },
    warnings,
  };
}
