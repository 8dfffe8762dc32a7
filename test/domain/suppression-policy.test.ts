import { describe, expect, it } from 'vitest';
import {
  eventMaySuppress,
  refusalSuppresses,
  refusedMailboxes,
  suppressionFor,
  type Attempted,
  type SuppressionReason,
} from '../../src/domain/suppression-policy.js';
import type { FailureKind, RefusalKind } from '../../src/delivery/transport.js';
import type { ProviderEvent } from '../../src/events/types.js';
import type { RecipientState } from '../../src/storage/recipient-states.js';

/**
 * Automatic suppression (issue 26 §3): every outcome, from the worker and from events after
 * hand-off, with what it puts on the list. The tables are Records over the callers' own types,
 * so a new failure kind, event type or recipient state does not compile until it is listed here.
 */

const HAND_OFF: Record<FailureKind, SuppressionReason | undefined> = {
  temporary: undefined, // retried; when retries run out, failed: not about the mailbox
  mailbox: 'hard_bounce', // 5.1.1 "user unknown", Postmark's inactive recipients
  permanent: undefined, // relaying denied, content refused
  service: undefined, // our credentials or settings
};

type Bounce = NonNullable<ProviderEvent['bounceType']> | 'unsaid';
const EVENTS: Record<ProviderEvent['type'], Record<Bounce, SuppressionReason | undefined>> = {
  delivered: { hard: undefined, soft: undefined, unsaid: undefined },
  bounced: { hard: 'hard_bounce', soft: undefined, unsaid: 'hard_bounce' },
  complained: { hard: 'complaint', soft: 'complaint', unsaid: 'complaint' },
  deferred: { hard: undefined, soft: undefined, unsaid: undefined },
  failed: { hard: undefined, soft: undefined, unsaid: undefined }, // a provider's reject or drop
};

const MAY_SUPPRESS: Record<RecipientState, boolean> = {
  pending: true,
  sent: true,
  deferred: true,
  delivered: true,
  bounced: true,
  complained: true,
  failed: true,
  suppressed: false, // dropped before sending: never got the message
};

describe('suppressionFor: every outcome', () => {
  it.each(Object.entries(HAND_OFF))('at hand-off, %s → %s', (kind, reason) => {
    expect(suppressionFor({ at: 'hand-off', kind: kind as FailureKind })).toBe(reason);
  });

  const events = Object.entries(EVENTS).flatMap(([type, byBounce]) =>
    Object.entries(byBounce).map(([bounce, reason]) => [type, bounce, reason] as const),
  );
  it.each(events)('event %s (bounce type %s) → %s', (type, bounce, reason) => {
    const bounceType = bounce === 'unsaid' ? undefined : (bounce as 'hard' | 'soft');
    expect(suppressionFor({ at: 'event', type: type as ProviderEvent['type'], bounceType })).toBe(reason);
  });

  it.each(Object.entries(MAY_SUPPRESS))('an event about a recipient in state %s may suppress it: %s', (state, may) => {
    expect(eventMaySuppress(state)).toBe(may);
  });
});

describe('whom a refusal at hand-off suppresses', () => {
  const attempted: Attempted = {
    owed: ['ada@example.org', 'bob@example.org', 'cc@example.org', 'zoë@xn--exmple-cua.com'],
    to: new Set(['ada@example.org', 'bob@example.org', 'zoë@xn--exmple-cua.com']),
  };

  it('the recipients the relay named, as the message spells them or not', () => {
    expect(refusedMailboxes(['Bob@Example.org', 'zoë@exämple.com'], attempted)).toEqual([
      'bob@example.org',
      'zoë@xn--exmple-cua.com',
    ]);
    expect(refusedMailboxes(['cc@example.org'], attempted)).toEqual(['cc@example.org']);
  });

  it('naming none: the To addresses the attempt went to, not Cc or Bcc', () => {
    expect(refusedMailboxes([], attempted)).toEqual(['ada@example.org', 'bob@example.org', 'zoë@xn--exmple-cua.com']);
    expect(refusedMailboxes([], { owed: ['cc@example.org'], to: new Set(['ada@example.org']) })).toEqual([]);
  });

  it('never an address the attempt did not go to', () => {
    expect(refusedMailboxes(['stranger@example.net'], attempted)).toEqual([]);
    expect(refusedMailboxes(['stranger@example.net', 'ada@example.org'], attempted)).toEqual(['ada@example.org']);
    // Settled by an earlier attempt (not owed now): a refusal now is not about it.
    expect(refusedMailboxes(['ada@example.org'], { owed: ['bob@example.org'], to: attempted.to })).toEqual([]);
  });

  const REFUSALS: Record<RefusalKind, boolean> = { temporary: false, mailbox: true, permanent: false };
  it.each(Object.entries(REFUSALS))('one recipient refused as %s is suppressed: %s', (kind, suppressed) => {
    expect(refusalSuppresses({ address: 'ADA@example.org', kind: kind as RefusalKind }, attempted)).toBe(suppressed);
    expect(refusalSuppresses({ address: 'stranger@example.net', kind: kind as RefusalKind }, attempted)).toBe(false);
  });
});
