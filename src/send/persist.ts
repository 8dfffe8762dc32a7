import type { AttachmentRef } from '../attachments/resolve.js';
import { takeCredit } from '../credits/take.js';
import { canonicalAddress } from '../domain/addresses.js';
import type { Caller } from '../domain/caller.js';
import { newSortableId, randomToken, sha256 } from '../domain/ids.js';
import type { Service } from '../domain/types.js';
import type { RecipientCharge } from '../protection/rate-limits.js';
import type { StoredResponse } from '../storage/idempotency.js';
import type { RenderedEmail } from '../templates/render.js';
import type { SendDeps } from './accept.js';
import type { IdempotencyRequest } from './idempotency.js';
import type { SendAccepted } from './request.js';

/**
 * The second half of the send path (moved out of accept.ts for issue 28): idempotency around one
 * acceptance, then one transaction that takes a credit (or holds, or refuses), stores the message
 * with its content and first event, and records the idempotent response. The first half (what is
 * sent: a rendered template, or a submitted MIME message) is the `prepare` each caller passes.
 */

/** What the first half hands the second: everything that is stored with the message. */
export interface Prepared {
  /** The template's id, or `'@smtp'` for a submitted message sent as submitted (lead's L5). */
  templateId: string;
  service: Service;
  email: RenderedEmail;
  /** Recipient daily counts this send used (refunded if it is not accepted after all). */
  charge: RecipientCharge | undefined;
  /** Blobs already stored for this message; deleted again if it is not accepted. */
  attachments: AttachmentRef[];
  /** Addressed to simulator addresses (issue 27): never takes a credit, never leaves the machine. */
  simulated: boolean;
  /** The message's id when the first half needed it already (a submitted message's own Message-ID header). */
  messageId?: string;
  /** The Message-ID header the message goes out with; absent: ours, `<msg_…@host>`. */
  headerMessageId?: string;
  /** A submitted message's bytes, delivered as they are (message_contents.mime). */
  mime?: Buffer;
}

/** What the second half reads of the request. */
export interface PersistContext {
  caller: Caller;
  /** Idempotency key (already validated) and the digest of the request it arrived with. */
  idempotency: { key: string; digest: string } | undefined;
  /** The response this endpoint sends for an accepted message: stored for replays. */
  respond: (accepted: SendAccepted) => StoredResponse;
}

export interface SendOutcome {
  response: StoredResponse;
  replayed: boolean;
}

/**
 * Steps 3 and 6 of the send path around `prepare` (steps 4–5): a replay answers before anything
 * else is checked (a CAPTCHA token is single use, so a retry of a completed send must not be
 * verified again); otherwise prepare, then commit, then the idempotency slot is let go.
 */
export async function acceptPrepared(
  deps: SendDeps,
  ctx: PersistContext,
  prepare: () => Promise<Prepared>,
): Promise<SendOutcome> {
  const { org, key } = ctx.caller;
  // Scoped per mode (risk R2): a test run's key replayed by a live send within 24 h would
  // otherwise answer the test message and send nothing. The message row keeps the raw key.
  const idem =
    ctx.idempotency === undefined
      ? undefined
      : { orgId: org.id, ...ctx.idempotency, key: key.mode === 'test' ? `test:${ctx.idempotency.key}` : ctx.idempotency.key };
  if (idem === undefined) return { response: await commit(deps, ctx, await prepare(), undefined), replayed: false };
  const replay = await deps.idempotency.begin(idem);
  if (replay !== undefined) return { response: replay, replayed: true };
  let accepted = false;
  try {
    const response = await commit(deps, ctx, await prepare(), idem);
    accepted = true;
    return { response, replayed: false };
  } finally {
    await deps.idempotency.end(idem, accepted);
  }
}

async function commit(
  deps: SendDeps,
  ctx: PersistContext,
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
  ctx: PersistContext,
  p: Prepared,
  idem: IdempotencyRequest | undefined,
): Promise<StoredResponse> {
  const { org, key } = ctx.caller;
  const now = deps.clock.now();
  const id = p.messageId ?? newSortableId('msg', now);
  const statusToken = `st_${randomToken(24)}`;
  return deps.store
    .transaction(async (tx) => {
      // A test key's or a simulator send is never charged, so never 402 nor held (issue 27 §2).
      const charged = key.mode === 'live' && !p.simulated;
      const { status, creditTaken } = charged
        ? await takeCredit(tx, org, key.type)
        : { status: 'queued' as const, creditTaken: false };
      await tx.messages.insert({
        id,
        org_id: org.id,
        template_id: p.templateId,
        service_id: p.service.id,
        status,
        status_token_hash: sha256(statusToken),
        key_type: key.type,
        content: JSON.stringify(p.email),
        subject: p.email.subject,
        header_message_id: p.headerMessageId ?? `<${id}@${deps.messageIdHost}>`,
        attachments: p.attachments.length > 0 ? JSON.stringify(p.attachments) : null,
        credit_taken: creditTaken,
        mode: key.mode,
        simulated: p.simulated,
        idempotency_key: ctx.idempotency?.key ?? null,
        recipients: [
          ...p.email.to.map((a) => ({ kind: 'to' as const, email: canonicalAddress(a.address) })),
          ...p.email.cc.map((a) => ({ kind: 'cc' as const, email: canonicalAddress(a.address) })),
          ...p.email.bcc.map((a) => ({ kind: 'bcc' as const, email: canonicalAddress(a.address) })),
        ],
        created_at: now,
        ...(p.mime !== undefined ? { mime: p.mime } : {}),
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
