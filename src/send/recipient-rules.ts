import { canonicalAddress } from '../domain/addresses.js';
import type { KeyMode, Organization } from '../domain/types.js';
import { ApiError } from '../errors/api-error.js';
import type { Store } from '../storage/store.js';
import { allRecipients, type RenderedEmail } from '../templates/render.js';
import { classifyRecipients, exemptFromSuppression, type RecipientClasses } from '../testmode/simulator.js';

/**
 * The simulator's rules at acceptance (issue 27 §3.1, lead's decisions D2/D3): an unknown local
 * part at the simulator domain is a typo (422), and a live key may not mix simulator and real
 * recipients in one message (422: the real ones would be sent, the simulated ones not, and the
 * message's outcome would describe neither). A test key may mix: nothing of it leaves anyway.
 */
export function checkSimulatorRecipients(email: RenderedEmail, mode: KeyMode): RecipientClasses {
  const sim = classifyRecipients(allRecipients(email));
  if (sim.unknown.length > 0) {
    throw new ApiError('invalid_recipient', {
      message: `Unknown simulator address: ${sim.unknown.join(', ')} (see README "Simulator addresses").`,
      details: { reason: 'unknown_simulator_address', recipients: sim.unknown },
    });
  }
  if (mode === 'live' && sim.simulated.length > 0 && sim.real.length > 0) {
    throw new ApiError('invalid_recipient', {
      message: 'A live key cannot send one message to simulator and real recipients together; send them apart.',
      details: { reason: 'simulator_mixed' },
    });
  }
  return sim;
}

/**
 * Block list (403) before suppression (451): the block list is the organization's own rule
 * against abuse, the suppression list protects recipients who bounced or complained. An entry
 * `@example.com` blocks a whole domain. suppressed@ of the simulator is always 451; the other
 * simulator addresses are not looked up on the suppression list (lead's decision D4: their
 * bounces and complaints write real rows, yet a test run must be repeatable).
 */
export async function checkLists(
  store: Store,
  org: Organization,
  email: RenderedEmail,
  params: Record<string, unknown>,
  sim: RecipientClasses,
): Promise<void> {
  const recipients = allRecipients(email);
  const candidates = new Set<string>();
  for (const r of recipients) {
    candidates.add(r);
    candidates.add(r.slice(r.lastIndexOf('@')));
  }
  const watched = org.security.block_list_watch_variable;
  const watchedValue = watched === null ? undefined : params[watched];
  if (typeof watchedValue === 'string' && watchedValue.trim() !== '') {
    const v = canonicalAddress(watchedValue);
    candidates.add(v);
    if (v.includes('@')) candidates.add(v.slice(v.lastIndexOf('@')));
  }
  // The worker asks the same rule when it drops suppressed recipients (delivery/recipients.ts).
  const checked = sim.simulated.length === 0 ? recipients : recipients.filter((r) => !exemptFromSuppression(r));
  const hits = await store.listHits.among(org.id, [...candidates], checked);
  if (hits.blocked.length > 0) throw new ApiError('recipient_blocked');
  if (sim.suppressed.length > 0) {
    throw new ApiError('recipient_suppressed', {
      message: 'suppressed@simulator.mailroom.test is always refused as suppressed; no credit was used.',
      details: { recipients: sim.suppressed, simulated: true },
    });
  }
  if (hits.suppressed.length > 0) {
    throw new ApiError('recipient_suppressed', {
      message: 'A recipient is on the suppression list; no credit was used.',
      details: { recipients: hits.suppressed },
    });
  }
}
