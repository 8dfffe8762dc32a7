import { canonicalAddress } from '../domain/addresses.js';

/**
 * The simulator's reserved domain (issue 27). `.test` is reserved by RFC 2606, so no real mailbox
 * can ever live there: an address at it is answered by the sandbox, never handed to a relay.
 */
export const SIMULATOR_DOMAIN = 'simulator.mailroom.test';

/** The local parts the simulator answers, each one scenario (README "Simulator addresses"). */
export const SCENARIOS = ['delivered', 'bounce', 'softbounce', 'complaint', 'delay', 'reject', 'suppressed'] as const;
export type Scenario = (typeof SCENARIOS)[number];

const KNOWN: ReadonlySet<string> = new Set(SCENARIOS);

/**
 * `undefined`: not the simulator domain; `{scenario: undefined}`: the reserved domain with a local
 * part it does not know (a typo, refused at acceptance). `bounce+case7@…` → `bounce`, label `case7`,
 * so one application can run the same scenario many times and tell the messages apart.
 */
export function simulatorAddress(address: string): { scenario: Scenario | undefined; label: string | null } | undefined {
  const canonical = canonicalAddress(address);
  const at = canonical.lastIndexOf('@');
  if (at === -1 || canonical.slice(at + 1) !== SIMULATOR_DOMAIN) return undefined;
  const local = canonical.slice(0, at);
  const plus = local.indexOf('+');
  const base = plus === -1 ? local : local.slice(0, plus);
  const label = plus === -1 ? null : local.slice(plus + 1);
  return { scenario: KNOWN.has(base) ? (base as Scenario) : undefined, label };
}

export interface RecipientClasses {
  /** Known simulator addresses (suppressed@ included). */
  simulated: string[];
  /** Addresses outside the simulator domain. */
  real: string[];
  /** At the simulator domain, local part unknown. */
  unknown: string[];
  /** suppressed@ (with any label): always refused at acceptance with 451. */
  suppressed: string[];
}

/** Sorts a message's recipients for the send path's checks (design §2). Addresses are kept as given. */
export function classifyRecipients(addrs: readonly string[]): RecipientClasses {
  const out: RecipientClasses = { simulated: [], real: [], unknown: [], suppressed: [] };
  for (const address of addrs) {
    const sim = simulatorAddress(address);
    if (sim === undefined) out.real.push(address);
    else if (sim.scenario === undefined) out.unknown.push(address);
    else {
      out.simulated.push(address);
      if (sim.scenario === 'suppressed') out.suppressed.push(address);
    }
  }
  return out;
}

/** softbounce@'s first attempt asks for a retry this much later: short enough for a test to wait for. */
export const SOFTBOUNCE_RETRY_MS = 5_000;

/** delay@ is deferred this many times, evenly over the configured delay. */
const DELAY_DEFERRALS = 3;

export type HandOff = { kind: 'accept' } | { kind: 'temporary' | 'permanent'; reason: string; retryAfterMs?: number };

/**
 * What the sandbox answers at hand-off for attempt `attempt` (1-based) of a message created at
 * `createdAt`. `delay@` stays temporary until `createdAt + delayMs`, retrying every third of it,
 * never past the end (so 9 s → retries at +3, +6, +9 s, then accepted): 3 deferrals whatever the
 * setting, well within the retry policy's attempts.
 */
export function handOff(s: Scenario, attempt: number, createdAt: number, now: number, delayMs: number): HandOff {
  switch (s) {
    case 'softbounce':
      return attempt <= 1
        ? { kind: 'temporary', reason: '452 4.2.2 simulated: mailbox full', retryAfterMs: SOFTBOUNCE_RETRY_MS }
        : { kind: 'accept' };
    case 'delay': {
      const until = createdAt + delayMs;
      if (now >= until) return { kind: 'accept' };
      const retryAfterMs = Math.min(Math.ceil(delayMs / DELAY_DEFERRALS), until - now);
      return { kind: 'temporary', reason: '451 4.4.1 simulated: delivery delayed', retryAfterMs };
    }
    case 'reject':
      return { kind: 'permanent', reason: '554 5.7.1 simulated: message refused by policy' };
    case 'suppressed':
      // Refused at acceptance (451) before a message exists; a message only reaches here if that
      // check was bypassed, and then it must not look delivered.
      return { kind: 'permanent', reason: '550 5.1.1 simulated: recipient suppressed' };
    default:
      return { kind: 'accept' };
  }
}

export interface SimulatedEvent {
  type: 'delivered' | 'bounced' | 'complained';
  bounceType?: 'hard';
  status?: string;
  reason?: string;
}

/** The provider-style events an accepted hand-off leads to, in order (recorded by the simulator ticker). */
export function afterHandOff(s: Scenario): SimulatedEvent[] {
  switch (s) {
    case 'bounce':
      return [{ type: 'bounced', bounceType: 'hard', status: '5.1.1', reason: '550 5.1.1 simulated: mailbox does not exist' }];
    case 'complaint':
      return [{ type: 'delivered' }, { type: 'complained' }];
    case 'reject':
    case 'suppressed':
      return [];
    default:
      return [{ type: 'delivered' }];
  }
}

/**
 * Whether the suppression list is not asked about this address (lead's decision D4): the
 * simulator's bounces and complaints write real suppression rows, yet the simulator addresses
 * other than suppressed@ keep working, so an application's test run can be repeated (as SES's
 * simulator never lands on the account's suppression list). suppressed@ is always refused.
 */
export function exemptFromSuppression(address: string): boolean {
  const scenario = simulatorAddress(address)?.scenario;
  return scenario !== undefined && scenario !== 'suppressed';
}
