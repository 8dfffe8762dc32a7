import { storeAttachments } from '../attachments/resolve.js';
import type { BlobStore } from '../blobs/blob-store.js';
import type { Config } from '../config/env.js';
import type { Caller } from '../domain/caller.js';
import type { ClientInfo } from '../domain/client.js';
import type { Clock } from '../domain/clock.js';
import { Lru } from '../domain/lru.js';
import type { Metrics } from '../observability/metrics.js';
import { ApiError } from '../errors/api-error.js';
import {
  analyseTemplate,
  checkLockedContent,
  checkTemplateLock,
  isLockedSend,
  type TemplateShape,
} from '../protection/dynamic-lock.js';
import type { Protection } from '../protection/index.js';
import type { Store } from '../storage/store.js';
import { templateKey, type ParamsValidator } from '../templates/params.js';
import { allRecipients, type compileTemplate } from '../templates/render.js';
import { IdempotencyGuard } from './idempotency.js';
import { acceptPrepared, type PersistContext, type Prepared, type SendOutcome } from './persist.js';
import {
  checkNotFrozen,
  checkParams,
  checkRenderedLinks,
  findTemplate,
  renderForService,
  resolveService,
} from './render-step.js';
import { checkLists, checkSimulatorRecipients } from './recipient-rules.js';
import type { SendInput } from './request.js';

/** Spec, Limits: 256 kB of JSON template parameters per message. */
export const MAX_PARAMS_BYTES = 256 * 1024;

/**
 * The 256 kB limit, part of reading the body (send path step 1, README, Design): each send
 * route checks it before the key, so an oversized request is 413 whatever else is wrong with
 * it, and never reaches a template lookup, a rate-limit count or a single-use CAPTCHA token.
 */
export function checkParamsSize(params: object | undefined, field = 'template_params'): void {
  const size = Buffer.byteLength(JSON.stringify(params ?? {}));
  if (size > MAX_PARAMS_BYTES) {
    throw new ApiError('payload_too_large', {
      message: `${field} is ${size} bytes of JSON; the limit is ${MAX_PARAMS_BYTES}.`,
      details: { reason: 'template_params', limit: MAX_PARAMS_BYTES },
    });
  }
}

export interface SendDeps {
  store: Store;
  clock: Clock;
  config: Config;
  validators: Lru<ParamsValidator>;
  renderers: Lru<ReturnType<typeof compileTemplate>>;
  /** What the dynamic-recipient lock knows of each template version. */
  shapes: Lru<TemplateShape>;
  idempotency: IdempotencyGuard;
  metrics: Metrics | undefined;
  onAccepted: (() => void) | undefined;
  /** Rate limits and CAPTCHA (src/protection). */
  protection: Protection;
  /** Where attachment bytes go. */
  blobs: BlobStore;
  /** The right-hand side of every Message-ID header: the base URL's host name. */
  messageIdHost: string;
}

/** The services the send path is given (built once, in src/cli/runtime.ts); the caches are its own. */
export type SendServices = Pick<SendDeps, 'store' | 'clock' | 'config' | 'metrics' | 'onAccepted' | 'protection' | 'blobs'>;

export function createSendDeps(services: SendServices): SendDeps {
  const { store, clock, config } = services;
  // 1,000 template versions of compiled code is a few MB at most and covers any hot set.
  return {
    ...services,
    validators: new Lru(1000),
    renderers: new Lru(1000),
    shapes: new Lru(1000),
    idempotency: new IdempotencyGuard(store, clock),
    messageIdHost: new URL(config.baseUrl).hostname || 'mailroom.local',
  };
}

/**
 * Counts one request toward the plan and key limits (and, for public keys, the per-IP limit
 * and anomaly detection). The batch endpoint calls it once for a whole batch and then passes
 * `requestCounted: true` with each item.
 */
export function countSendRequest(deps: SendDeps, caller: Caller, client: ClientInfo): Promise<void> {
  return deps.protection.limits.countRequest(caller, client);
}

export interface SendContext extends PersistContext {
  input: SendInput;
  /** What the route read of the client: its address for the per-IP limit, Origin for CAPTCHA. */
  client: ClientInfo;
  /** The request was already counted toward the rate limits (a batch item: `countSendRequest`). */
  requestCounted?: boolean;
  /**
   * A send test from the admin API: this one address replaces the template's To, Cc and Bcc
   * (checked as an e-mail address without Handlebars braces by the route).
   */
  testRecipient?: string;
  /**
   * SMTP submission's template mode (issue 28): the envelope's recipients replace the template's
   * To, Cc and Bcc, as a send test's one address does (checked without braces at RCPT TO).
   */
  recipients?: readonly string[];
  /** SMTP submission's template mode: the submitted Message-ID header, kept (bracketed). */
  headerMessageId?: string;
}

export type { SendOutcome } from './persist.js';

/**
 * Steps 3–6 of the send path (README, Design), after the caller passed the key, origin and headless
 * rules and the flood guard: idempotency, rate limits, template and service, the dynamic-recipient
 * lock and CAPTCHA, parameters, rendering and recipient rules, links, then one transaction that
 * takes a credit (or holds, or refuses), stores the message with its rendered content and first
 * event, and records the idempotent response (persist.ts).
 */
export function acceptSend(deps: SendDeps, ctx: SendContext): Promise<SendOutcome> {
  return acceptPrepared(deps, ctx, () => prepare(deps, ctx));
}

async function prepare(deps: SendDeps, ctx: SendContext): Promise<Prepared> {
  const { org, key } = ctx.caller;
  const { input } = ctx;
  const { limits, captcha } = deps.protection;
  // Step 3 is done (a replay never gets here): a private-key request counts now.
  if (key.type === 'private' && ctx.requestCounted !== true) await limits.countRequest(ctx.caller, ctx.client);

  // Step 4.
  const stored = await findTemplate(deps.store, org.id, input.template_id);
  checkNotFrozen(stored);
  // A send test (or a submission's envelope) names its addresses instead of the template's
  // recipients: that template is no stored version, so no cache may hold what is compiled from it.
  const instead = ctx.recipients ?? (ctx.testRecipient === undefined ? undefined : [ctx.testRecipient]);
  const template = instead === undefined ? stored : { ...stored, to: instead.join(', '), cc: '', bcc: '' };
  const cacheKey = instead === undefined ? templateKey(template) : undefined;
  const service = await resolveService(deps.store, org, template, input.service_id);
  const shape =
    cacheKey === undefined ? analyseTemplate(template) : deps.shapes.getOrCreate(cacheKey, () => analyseTemplate(template));
  // Limits rule 3: a public-key request counts toward plan, key, IP and anomaly limits once it
  // passed the template lookup and, where the template requires one, the CAPTCHA; so before
  // the recipient lock when it requires none, and only after the CAPTCHA when it does.
  const countPublic = async () => {
    if (key.type === 'public' && ctx.requestCounted !== true) await limits.countRequest(ctx.caller, ctx.client);
  };
  if (!template.captcha) await countPublic();
  checkTemplateLock(template, shape, key.type);
  if (template.captcha) {
    if (key.type === 'public')
      await captcha.check(
        org,
        { token: input.turnstile_token, turnstileKey: input.turnstile_key, keyMode: key.mode },
        ctx.client,
      );
    await countPublic();
  }

  // Step 5.
  const params = input.template_params;
  checkParams(deps, template, cacheKey, params, input.params_source);
  const locked = isLockedSend(shape, key.type);
  if (locked) checkLockedContent(params, template.params, shape);
  const email = renderForService(deps, template, cacheKey, service, params);
  const sim = checkSimulatorRecipients(email, key.mode);
  await checkLists(deps.store, org, email, params, sim);
  checkRenderedLinks(org, template, email, locked);
  const charge = locked ? await limits.countRecipients(org, allRecipients(email)) : undefined;
  // Last, because it stores bytes: every cheaper check has passed by now.
  const attachments = await storeAttachments(
    { store: deps.store, blobs: deps.blobs, now: deps.clock.now() },
    org,
    template,
    input.attachments,
  ).catch(async (err: unknown) => {
    if (charge !== undefined) await limits.refund(charge);
    throw err;
  });
  return {
    templateId: template.id,
    service,
    email,
    charge,
    attachments,
    simulated: sim.simulated.length > 0,
    ...(ctx.headerMessageId !== undefined ? { headerMessageId: ctx.headerMessageId } : {}),
  };
}
