import type { Service } from '../domain/types.js';
import type { ClaimedMessage, SettledState } from '../storage/queue-types.js';
import type { Store } from '../storage/store.js';
import { attemptDirect, attemptThroughChain, type AttemptDeps } from './attempt.js';
import { serviceKey, type BatchContext } from './batch-context.js';
import { failoverSettings, serviceChain } from './failover.js';
import type { Outcomes } from './outcomes.js';
import { addressees, toAddresses, type AttemptResult } from './recipients.js';
import { readStoredContent } from './stored.js';
import type { Transport } from './transport.js';

/**
 * One claimed message's attempt, from its stored content to its outcome (moved out of worker.ts):
 * who it is still owed to (suppressed since, settled by an earlier attempt), then test-mode and
 * simulator messages to the sandbox (issue 27), any other through its service chain.
 */

export interface DeliverDeps {
  store: Store;
  logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  outcomes: Outcomes;
  attemptDeps: AttemptDeps;
  /** Where test-mode and simulator messages go (transports/sandbox.ts). */
  sandbox: Transport;
  transportFor(service: Service): Transport | undefined;
}

export async function deliverClaimed(deps: DeliverDeps, m: ClaimedMessage, context: BatchContext): Promise<void> {
  const { logger, outcomes } = deps;
  const log = { message_id: m.id, org_id: m.org_id, service_id: m.service_id, attempt: m.attempts };
  const content = context.contents.get(m.id) ?? readStoredContent(m.content, m.attachments);
  if (!content.ok) {
    await outcomes.finish(m, 'failed', content.reason);
    logger.warn({ ...log, outcome: 'failed', reason: content.reason }, 'delivery attempt');
    return;
  }
  // Suppressed after acceptance (a bounce or complaint arrived meanwhile): those recipients
  // are dropped; with no To left (and nobody reached by an earlier attempt) the message is
  // discarded and its credit returned. Recipients an earlier attempt settled are left out.
  const prior = context.recipientStates.get(m.id) ?? new Map<string, SettledState>();
  const who = addressees(content.email, prior, context.suppressed.get(m.org_id) ?? new Set<string>());
  const email = who.email;
  if (email.to.length === 0 && prior.size === 0) {
    await outcomes.finish(m, 'discarded', `recipients suppressed: ${who.suppressed.join(', ')}`, who.suppressed);
    logger.info({ ...log, outcome: 'discarded' }, 'delivery attempt');
    return;
  }
  // Recipients settled apart (now, or by an earlier attempt): every outcome is per recipient.
  const apart = prior.size > 0 || who.suppressed.length > 0;
  const settle = (result: AttemptResult, sentVia?: string) =>
    outcomes.settle(
      m,
      {
        owed: who.owed,
        suppressed: who.suppressed,
        prior,
        to: toAddresses(content.email),
        result,
        ...(sentVia !== undefined ? { sentVia } : {}),
      },
      log,
    );
  if (who.owed.length === 0) {
    await settle(undefined);
    return;
  }
  // A submitted message's bytes (SMTP, issue 28): never read by the claim (up to 22.6 MB each),
  // and per attempt only where they are used: by a relay or provider, and by the test inbox's
  // first capture. The sandbox answers a live key's simulator addresses from the summary, and a
  // test-mode retry (softbounce@, delay@) finds its capture already kept (sandbox.ts).
  // A storage error is thrown (the worker gives the lease back); no bytes at all can never be sent.
  const needsBytes = content.submitted && (m.mode === 'test' ? !(await deps.store.testInbox.has(m.id)) : !m.simulated);
  const mime = needsBytes ? await deps.store.messages.submittedMime(m.id) : undefined;
  if (needsBytes && mime === undefined) {
    const reason = 'the submitted message has no stored bytes; it can never be sent';
    await outcomes.finish(m, 'failed', reason);
    logger.warn({ ...log, outcome: 'failed', reason }, 'delivery attempt');
    return;
  }
  const submitted = mime !== undefined ? { mime } : {};

  if (m.mode === 'test' || m.simulated) {
    const input = { m, log, email, attachments: content.attachments, apart, settle, ...submitted };
    const envelopeTo = prior.size > 0 ? who.envelope : undefined;
    return attemptDirect(deps.attemptDeps, { ...input, envelopeTo }, deps.sandbox, m.simulated ? 'simulator' : 'capture');
  }
  const read = context.services.get(serviceKey(m));
  const service = read === undefined || 'unreadable' in read ? undefined : read;
  const transport = service === undefined ? undefined : deps.transportFor(service);
  if (service === undefined || transport === undefined) {
    const reason =
      read !== undefined && 'unreadable' in read
        ? read.unreadable
        : service === undefined
          ? 'the service no longer exists'
          : `unknown provider ${service.provider}`;
    await outcomes.finish(m, 'held_service_error', reason);
    logger.warn({ ...log, outcome: 'held_service_error' }, 'delivery attempt');
    return;
  }

  const chain = await serviceChain(deps.store, context, service);
  await attemptThroughChain(deps.attemptDeps, {
    m,
    log,
    chain,
    onServiceError: failoverSettings(service).onServiceError,
    email,
    attachments: content.attachments,
    // A retry for some recipients only: the others already have it.
    envelopeTo: prior.size > 0 ? who.envelope : undefined,
    apart,
    settle,
    ...submitted,
  });
}
