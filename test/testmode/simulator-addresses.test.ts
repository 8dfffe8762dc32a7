import { describe, expect, it } from 'vitest';
import {
  afterHandOff,
  classifyRecipients,
  handOff,
  SCENARIOS,
  SOFTBOUNCE_RETRY_MS,
  simulatorAddress,
} from '../../src/testmode/simulator.js';

describe('simulatorAddress', () => {
  it('knows every scenario at the reserved domain', () => {
    for (const s of SCENARIOS) expect(simulatorAddress(`${s}@simulator.mailroom.test`)).toEqual({ scenario: s, label: null });
  });

  it('splits a +label at the first plus and ignores case', () => {
    expect(simulatorAddress('Bounce+Case7@Simulator.Mailroom.TEST')).toEqual({ scenario: 'bounce', label: 'case7' });
    expect(simulatorAddress('delivered+a+b@simulator.mailroom.test')).toEqual({ scenario: 'delivered', label: 'a+b' });
    expect(simulatorAddress('  delivered+@simulator.mailroom.test ')).toEqual({ scenario: 'delivered', label: '' });
  });

  it('reserves the domain: an unknown local part has no scenario', () => {
    expect(simulatorAddress('deliverd@simulator.mailroom.test')).toEqual({ scenario: undefined, label: null });
    expect(simulatorAddress('+x@simulator.mailroom.test')).toEqual({ scenario: undefined, label: 'x' });
  });

  it('compares the domain exactly: subdomains and look-alikes are real addresses', () => {
    expect(simulatorAddress('delivered@sub.simulator.mailroom.test')).toBeUndefined();
    expect(simulatorAddress('delivered@simulator.mailroom.test.example.com')).toBeUndefined();
    expect(simulatorAddress('delivered@mailroom.test')).toBeUndefined();
    expect(simulatorAddress('delivered')).toBeUndefined();
  });
});

describe('classifyRecipients', () => {
  it('sorts addresses as given into simulated, real, unknown and suppressed', () => {
    const c = classifyRecipients([
      'ann@example.com',
      'Delivered@simulator.mailroom.test',
      'suppressed+x@simulator.mailroom.test',
      'nobody@simulator.mailroom.test',
    ]);
    expect(c).toEqual({
      simulated: ['Delivered@simulator.mailroom.test', 'suppressed+x@simulator.mailroom.test'],
      real: ['ann@example.com'],
      unknown: ['nobody@simulator.mailroom.test'],
      suppressed: ['suppressed+x@simulator.mailroom.test'],
    });
    expect(classifyRecipients([])).toEqual({ simulated: [], real: [], unknown: [], suppressed: [] });
  });
});

describe('handOff', () => {
  const created = 1_000_000;

  it('softbounce: temporary on the first attempt with a 5 s retry, accepted later', () => {
    expect(handOff('softbounce', 1, created, created, 60_000)).toEqual({
      kind: 'temporary',
      reason: '452 4.2.2 simulated: mailbox full',
      retryAfterMs: SOFTBOUNCE_RETRY_MS,
    });
    expect(SOFTBOUNCE_RETRY_MS).toBe(5000);
    expect(handOff('softbounce', 2, created, created + 5000, 60_000)).toEqual({ kind: 'accept' });
  });

  it('delay: 9 s → retries at +3, +6, +9 s, then accepted (3 deferrals)', () => {
    const at = (t: number) => handOff('delay', 1, created, created + t, 9000);
    expect(at(0)).toMatchObject({ kind: 'temporary', retryAfterMs: 3000 });
    expect(at(3000)).toMatchObject({ kind: 'temporary', retryAfterMs: 3000 });
    expect(at(6000)).toMatchObject({ kind: 'temporary', retryAfterMs: 3000 });
    expect(at(9000)).toEqual({ kind: 'accept' });
    // A late claim never waits past the end of the delay; an uneven delay rounds the step up.
    expect(at(7500)).toMatchObject({ retryAfterMs: 1500 });
    expect(handOff('delay', 1, created, created, 10_000)).toMatchObject({ retryAfterMs: 3334 });
  });

  it('delay: the default 60 s is deferred exactly 3 times when each retry is taken on time', () => {
    let now = created;
    let deferrals = 0;
    for (;;) {
      const h = handOff('delay', deferrals + 1, created, now, 60_000);
      if (h.kind === 'accept') break;
      deferrals += 1;
      now += h.retryAfterMs ?? 0;
    }
    expect(deferrals).toBe(3);
    expect(now - created).toBe(60_000);
  });

  it('reject is permanent; delivered, bounce and complaint are accepted', () => {
    expect(handOff('reject', 1, created, created, 1)).toEqual({
      kind: 'permanent',
      reason: '554 5.7.1 simulated: message refused by policy',
    });
    for (const s of ['delivered', 'bounce', 'complaint'] as const)
      expect(handOff(s, 1, created, created, 1)).toEqual({ kind: 'accept' });
    expect(handOff('suppressed', 1, created, created, 1).kind).toBe('permanent');
  });
});

describe('afterHandOff', () => {
  it('lists the events each accepted scenario leads to, in order', () => {
    expect(afterHandOff('delivered')).toEqual([{ type: 'delivered' }]);
    expect(afterHandOff('softbounce')).toEqual([{ type: 'delivered' }]);
    expect(afterHandOff('delay')).toEqual([{ type: 'delivered' }]);
    expect(afterHandOff('bounce')).toEqual([
      { type: 'bounced', bounceType: 'hard', status: '5.1.1', reason: '550 5.1.1 simulated: mailbox does not exist' },
    ]);
    expect(afterHandOff('complaint')).toEqual([{ type: 'delivered' }, { type: 'complained' }]);
    expect(afterHandOff('reject')).toEqual([]);
  });
});
