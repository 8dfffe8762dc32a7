import { createHash } from 'node:crypto';
import type { BlobStore } from '../../blobs/blob-store.js';
import { canonicalAddress } from '../../domain/addresses.js';
import type { Clock } from '../../domain/clock.js';
import type { NewSimulatorEvent } from '../../storage/simulator-events.js';
import type { Store } from '../../storage/store.js';
import type { InboxRecipient } from '../../storage/test-inbox.js';
import { afterHandOff, handOff, simulatorAddress } from '../../testmode/simulator.js';
import { DeliveryError, type DeliveryReceipt, type OutgoingEmail, type Refusal, type Transport } from '../transport.js';
import { type RawComposer, rawComposer } from './raw-mime.js';

/**
 * Where test-mode and simulator messages go instead of a relay or a provider (issue 27 §3.2):
 * nothing leaves the process. A test-mode message is captured into the test inbox, the bytes an
 * SMTP relay would have received (raw-mime.ts: CRLF, Bcc in the envelope only); each simulator
 * recipient is answered as its scenario says (testmode/simulator.ts), and what follows an
 * accepted hand-off (delivered, bounced, complained) is scheduled for the simulator ticker.
 * Not in TRANSPORTS: no service selects it, the worker sends test and simulated messages here.
 */

export interface SandboxDeps {
  store: Store;
  blobs?: BlobStore | undefined;
  clock: Clock;
  /** How long delay@ is deferred (MAILROOM_SIMULATOR_DELAY_SECONDS). */
  simulatorDelayMs: number;
  /** The composer (tests wrap rawComposer() to keep the bytes they compare). */
  compose?: RawComposer['compose'];
}

/** The blob a captured message's bytes live under: no dot in the second segment (disk store keys). */
export const inboxBlobKey = (orgId: string, messageId: string): string => `${orgId}/eml_${messageId}`;

export function createSandbox(deps: SandboxDeps): Transport {
  let composer: RawComposer | undefined;
  const compose =
    deps.compose ??
    ((mail: OutgoingEmail) => {
      composer ??= rawComposer();
      return composer.compose(mail);
    });
  return {
    async send(mail) {
      if (mail.mode === 'test') await capture(deps, compose, mail);
      return answer(deps, mail);
    },
    async close() {
      composer?.close();
    },
  };
}

/**
 * Keeps the first composition only: a retry (softbounce@, delay@) finds it captured and leaves
 * it, so the inbox holds one copy whose bytes never change. The blob is written first: a crash
 * between leaves a blob that the retry overwrites under the same key, never a row without bytes.
 */
async function capture(deps: SandboxDeps, compose: RawComposer['compose'], mail: OutgoingEmail): Promise<void> {
  const { store, blobs, clock } = deps;
  if (await store.testInbox.has(mail.messageId)) return;
  // The runtime always has a blob store; a worker built without one cannot keep the bytes.
  if (blobs === undefined) throw new DeliveryError('temporary', 'the test inbox needs a blob store, and this worker has none');
  const orgId = mail.orgId ?? '';
  const raw = await compose({ ...mail, envelopeTo: undefined });
  const key = inboxBlobKey(orgId, mail.messageId);
  await blobs.put(key, raw.bytes, 'message/rfc822');
  // The claim carries no template id; one read of the row, for test-mode messages only.
  const stored = await store.messages.get(orgId, mail.messageId);
  const e = mail.email;
  const recipients: InboxRecipient[] = [
    ...e.to.map((a) => ({ kind: 'to' as const, address: a.address })),
    ...e.cc.map((a) => ({ kind: 'cc' as const, address: a.address })),
    ...e.bcc.map((a) => ({ kind: 'bcc' as const, address: a.address })),
  ];
  await store.testInbox.insert({
    message_id: mail.messageId,
    org_id: orgId,
    template_id: stored?.template_id ?? '',
    subject: e.subject,
    from_addr: e.from.address,
    recipients,
    blob_key: key,
    size: raw.bytes.length,
    sha256: createHash('sha256').update(raw.bytes).digest('hex'),
    created_at: mail.createdAt ?? clock.now(),
    captured_at: clock.now(),
  });
}

/** Each envelope recipient answered by its scenario; real addresses (test mode only) are accepted. */
async function answer(deps: SandboxDeps, mail: OutgoingEmail): Promise<DeliveryReceipt> {
  const now = deps.clock.now();
  const e = mail.email;
  const envelope = mail.envelopeTo ?? [...e.to, ...e.cc, ...e.bcc].map((a) => a.address);
  const refused: Refusal[] = [];
  const scheduled: NewSimulatorEvent[] = [];
  for (const address of envelope) {
    const sim = simulatorAddress(address);
    if (sim === undefined) continue;
    if (sim.scenario === undefined) {
      // Refused at acceptance (422 unknown_simulator_address); never accepted as if it were real.
      refused.push({ address, kind: 'permanent', reason: '550 5.1.1 simulated: unknown simulator address' });
      continue;
    }
    const h = handOff(sim.scenario, mail.attempt ?? 1, mail.createdAt ?? now, now, deps.simulatorDelayMs);
    if (h.kind !== 'accept') {
      refused.push({
        address,
        kind: h.kind,
        reason: h.reason,
        ...(h.retryAfterMs !== undefined ? { retryAfterMs: h.retryAfterMs } : {}),
      });
      continue;
    }
    const recipient = canonicalAddress(address);
    for (const event of afterHandOff(sim.scenario)) {
      scheduled.push({
        message_id: mail.messageId,
        org_id: mail.orgId ?? '',
        recipient,
        type: event.type,
        bounce_type: event.bounceType ?? null,
        status: event.status ?? null,
        reason: event.reason ?? null,
        due_at: now,
        event_key: `${mail.messageId}:${recipient}:${event.type}`,
      });
    }
  }
  if (refused.length === envelope.length && refused.length > 0) {
    const kinds = new Set(refused.map((r) => r.kind));
    const kind = kinds.size === 1 ? (refused[0]?.kind ?? 'permanent') : 'permanent';
    const retryAfterMs = Math.max(0, ...refused.map((r) => r.retryAfterMs ?? 0));
    throw new DeliveryError(
      kind,
      refused.map((r) => r.reason).join('; '),
      refused.map((r) => r.address),
      refused,
      retryAfterMs > 0 ? { retryAfterMs } : {},
    );
  }
  if (scheduled.length > 0) await deps.store.simulatorEvents.schedule(scheduled);
  return {
    response: mail.mode === 'test' ? 'captured in the test inbox' : '250 2.0.0 simulated',
    ...(refused.length > 0 ? { refused } : {}),
  };
}
