import { storeAttachments, type AttachmentRef } from '../attachments/resolve.js';
import type { BlobStore } from '../blobs/blob-store.js';
import type { Config } from '../config/env.js';
import { takeCredit } from '../credits/take.js';
import { canonicalAddress } from '../domain/addresses.js';
import type { Caller } from '../domain/caller.js';
import type { ClientInfo } from '../domain/client.js';
import type { Clock } from '../domain/clock.js';
import { newSortableId, randomToken, sha256 } from '../domain/ids.js';
import { Lru } from '../domain/lru.js';
import type { Service, Template } from '../domain/types.js';
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
import type { RecipientCharge } from '../protection/rate-limits.js';
import type { StoredResponse } from '../storage/idempotency.js';
import type { Store } from '../storage/store.js';
import { templateKey, type ParamsValidator } from '../templates/params.js';
import { allRecipients, type compileTemplate, type RenderedEmail } from '../templates/render.js';
import { IdempotencyGuard, type IdempotencyRequest } from './idempotency.js';
import {
  checkNotFrozen,
  checkParams,
  checkRenderedLinks,
  findTemplate,
  renderForService,
  resolveService,
} from './render-step.js';
import { checkLists, checkSimulatorRecipients } from './recipient-rules.js';
import type { SendAccepted, SendInput } from './request.js';

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

export interface SendContext {
  caller: Caller;
  input: SendInput;
  /** Idempotency key (already validated) and the digest of the request it arrived with. */
  idempotency: { key: string; digest: string } | undefined;
  /** The response this endpoint sends for an accepted message: stored for replays. */
  respond: (accepted: SendAccepted) => StoredResponse;
  /** What the route read of the client: its address for the per-IP limit, Origin for CAPTCHA. */
  client: ClientInfo;
  /** The request was already counted toward the rate limits (a batch item: `countSendRequest`). */
  requestCounted?: boolean;
  /**
   * A send test from the admin API: this one address replaces the template's To, Cc and Bcc
   * (checked as an e-mail address without Handlebars braces by the route).
   */
  testRecipient?: string;
}

export interface SendOutcome {
  response: StoredResponse;
  replayed: boolean;
}

/**
 * Steps 3–6 of the send path (README, Design), after the caller passed the key, origin and headless
 * rules and the flood guard: idempotency, rate limits, template and service, the dynamic-recipient
 * lock and CAPTCHA, parameters, rendering and recipient rules, links, then one transaction that
 * takes a credit (or holds, or refuses), stores the message with its rendered content and first
 * event, and records the idempotent response.
 */
export async function acceptSend(deps: SendDeps, ctx: SendContext): Promise<SendOutcome> {
  const { org, key } = ctx.caller;
  // Scoped per mode (risk R2): a test run's key replayed by a live send within 24 h would
  // otherwise answer the test message and send nothing. The message row keeps the raw key.
  const idem =
    ctx.idempotency === undefined
      ? undefined
      : { orgId: org.id, ...ctx.idempotency, key: key.mode === 'test' ? `test:${ctx.idempotency.key}` : ctx.idempotency.key };
  if (idem === undefined) return { response: await commit(deps, ctx, await prepare(deps, ctx), undefined), replayed: false };
  // A replay answers before any other check: a CAPTCHA token is single use, so a retry of a
  // completed send must not be verified again.
  const replay = await deps.idempotency.begin(idem);
  if (replay !== undefined) return { response: replay, replayed: true };
  let accepted = false;
  try {
    const response = await commit(deps, ctx, await prepare(deps, ctx), idem);
    accepted = true;
    return { response, replayed: false };
  } finally {
    await deps.idempotency.end(idem, accepted);
  }
}

interface Prepared {
  template: Template;
  service: Service;
  email: RenderedEmail;
  /** Recipient daily counts this send used (refunded if it is not accepted after all). */
  charge: RecipientCharge | undefined;
  /** Blobs already stored for this message; deleted again if it is not accepted. */
  attachments: AttachmentRef[];
  /** Addressed to simulator addresses (issue 27): never takes a credit, never leaves the machine. */
  simulated: boolean;
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
  // A send test names one address instead of the template's recipients: that template is no
  // stored version, so no cache may hold what is compiled from it.
  const template = ctx.testRecipient === undefined ? stored : { ...stored, to: ctx.testRecipient, cc: '', bcc: '' };
  const cacheKey = ctx.testRecipient === undefined ? templateKey(template) : undefined;
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
  return { template, service, email, charge, attachments, simulated: sim.simulated.length > 0 };
}

async function commit(
  deps: SendDeps,
  ctx: SendContext,
  p: Prepared,
  idem: IdempotencyRequest | undefined,
): Promise<StoredResponse> {
  try {
    return await persist(deps, ctx, p, idem);
  } catch (err) {
    if (p.charge !== undefined) await deps.protection.limits.refund(p.charge);
    for (const a of p.attachments) await deps.blobs.delete(a.blob_key).catch(() => undefined);
    throw err;
  }
}

async function persist(
  deps: SendDeps,
  ctx: SendContext,
  p: Prepared,
  idem: IdempotencyRequest | undefined,
): Promise<StoredResponse> {
  const { org, key } = ctx.caller;
  const now = deps.clock.now();
  const id = newSortableId('msg', now);
  const statusToken = `st_${randomToken(24)}`;
  return deps.store
    .transaction(async (tx) => {
      // A test key's or a simulator send is never charged, so never 402 nor held (issue 27 §2).
      const charged = key.mode === 'live' && !p.simulated;
      const status = charged ? await takeCredit(tx, org, key.type) : 'queued';
      await tx.messages.insert({
        id,
        org_id: org.id,
        template_id: p.template.id,
        service_id: p.service.id,
        status,
        status_token_hash: sha256(statusToken),
        key_type: key.type,
        content: JSON.stringify(p.email),
        subject: p.email.subject,
        header_message_id: `<${id}@${deps.messageIdHost}>`,
        attachments: p.attachments.length > 0 ? JSON.stringify(p.attachments) : null,
        credit_taken: charged && status === 'queued',
        mode: key.mode,
        simulated: p.simulated,
        idempotency_key: ctx.idempotency?.key ?? null,
        recipients: [
          ...p.email.to.map((a) => ({ kind: 'to' as const, email: canonicalAddress(a.address) })),
          ...p.email.cc.map((a) => ({ kind: 'cc' as const, email: canonicalAddress(a.address) })),
          ...p.email.bcc.map((a) => ({ kind: 'bcc' as const, email: canonicalAddress(a.address) })),
        ],
        created_at: now,
      });
      const response = ctx.respond({ message_id: id, status, status_token: statusToken });
      if (idem !== undefined) await deps.idempotency.record(tx, idem, response);
      return response;
    })
    .then((response) => {
      deps.metrics?.accepted.inc({ service: p.service.id });
      deps.onAccepted?.();
      return response;
    });
}
