import { describe, expect, it } from 'vitest';
import { verpAddress } from '../../src/delivery/verp.js';
import { newSortableId } from '../../src/domain/ids.js';
import type { ProviderEvent } from '../../src/events/types.js';
import { handleInbound, type InboundDeps } from '../../src/inbound/handle.js';
import { bounceReport } from '../support/bounce-reports.js';

// Reports as real MTAs and feedback loops send them (test/support/bounce-reports/), addressed to a
// VERP address made with the test's key; {{RCPT}} is the recipient the token names.

const SECRET = 'inbound-test-secret-0123456789abcdef';
const RCPT = 'ada@recipient.example';
const OTHER = 'grace@recipient.example';
const COMPLAINT = 'fbl@bounces.acme.test';

function setup(recipients: string[] = [RCPT, OTHER]) {
  const id = newSortableId('msg', 1_764_000_000_000);
  const recorded: ProviderEvent[][] = [];
  const deps: InboundDeps = {
    secret: SECRET,
    recipientsOf: async (m) => (m === id ? recipients : undefined),
    record: async (events) => {
      recorded.push(events);
    },
    now: () => 1_764_001_000_000,
  };
  const verp = (to = RCPT) => verpAddress(SECRET, 'bounces.acme.test', id, to)!;
  return { id, deps, recorded, verp };
}

describe('bounce and feedback reports → events', () => {
  it.each([
    ['postfix-user-unknown.eml', '5.1.1', /User unknown/],
    ['exim-failed.eml', '5.0.0', /No such user here/],
    ['exchange-ndr.eml', '5.1.10', /RecipientNotFound/],
    // Gmail's own bounce: the human part nested three deep (related → alternative, an inline
    // icon beside it) and a Diagnostic-Code folded over four lines.
    ['gmail-dsn-no-such-user.eml', '5.1.1', /does not exist.*NoSuchUser/s],
  ])("%s: a hard bounce of the token's recipient, with status and diagnostic", async (name, status, reason) => {
    const s = setup();
    const out = await handleInbound(s.deps, bounceReport(name, { VERP: s.verp(), RCPT }), [s.verp()]);
    expect(out.kind).toBe('recorded');
    expect(s.recorded).toHaveLength(1);
    const [e] = s.recorded[0]!;
    expect(e).toMatchObject({
      source: 'dsn',
      type: 'bounced',
      bounceType: 'hard',
      recipient: RCPT,
      status,
      match: { messageId: s.id },
    });
    expect(e!.reason).toMatch(reason);
    expect(e!.eventKey).toMatch(/^[0-9a-f]{64}$/);
  });

  it('the same report delivered twice gives the same event key (record dedupes it)', async () => {
    const s = setup();
    const raw = bounceReport('postfix-user-unknown.eml', { VERP: s.verp(), RCPT });
    await handleInbound(s.deps, raw, [s.verp()]);
    await handleInbound(s.deps, raw, [s.verp()]);
    expect(s.recorded[0]![0]!.eventKey).toBe(s.recorded[1]![0]!.eventKey);
  });

  it('a delay notice is a soft deferral', async () => {
    const s = setup();
    await handleInbound(s.deps, bounceReport('postfix-delayed.eml', { VERP: s.verp(), RCPT }), [s.verp()]);
    expect(s.recorded[0]).toEqual([
      expect.objectContaining({ type: 'deferred', bounceType: 'soft', status: '4.4.1', recipient: RCPT }),
    ]);
  });

  it("a DSN naming no recipient is about the token's recipient (found among the message's)", async () => {
    const s = setup();
    await handleInbound(s.deps, bounceReport('dsn-no-final-recipient.eml', { VERP: s.verp(OTHER) }), [s.verp(OTHER)]);
    expect(s.recorded[0]).toEqual([
      expect.objectContaining({ type: 'bounced', bounceType: 'hard', status: '5.2.2', recipient: OTHER }),
    ]);
  });

  it("attacker: a DSN naming another recipient than the token's bounces the token's, not the named one", async () => {
    const s = setup();
    const raw = bounceReport('postfix-user-unknown.eml', { VERP: s.verp(RCPT), RCPT: 'victim@elsewhere.example' });
    await handleInbound(s.deps, raw, [s.verp(RCPT)]);
    expect(s.recorded[0]![0]).toMatchObject({ recipient: RCPT, extra: { reported_recipient: 'victim@elsewhere.example' } });
  });

  it('Yahoo feedback loop to the complaint address: a complaint, the token from Original-Mail-From', async () => {
    const s = setup();
    const out = await handleInbound(s.deps, bounceReport('yahoo-arf.eml', { VERP: s.verp(), RCPT, COMPLAINT }), [COMPLAINT]);
    expect(out.kind).toBe('recorded');
    expect(s.recorded[0]).toEqual([
      expect.objectContaining({ source: 'arf', type: 'complained', recipient: RCPT, match: { messageId: s.id } }),
    ]);
  });

  it("a redacted feedback report: the token's recipient complained", async () => {
    const s = setup();
    await handleInbound(s.deps, bounceReport('gmail-style-arf-redacted.eml', { VERP: s.verp(OTHER), COMPLAINT }), [COMPLAINT]);
    expect(s.recorded[0]).toEqual([expect.objectContaining({ source: 'arf', type: 'complained', recipient: OTHER })]);
  });

  it.each(['out-of-office.eml', 'vacation-no-auto-submitted.eml'])(
    '%s: dropped as an auto-reply, nothing recorded',
    async (name) => {
      const s = setup();
      const out = await handleInbound(s.deps, bounceReport(name, { VERP: s.verp(), RCPT }), [s.verp()]);
      expect(out).toEqual({ kind: 'dropped', reason: 'auto_reply' });
      expect(s.recorded).toHaveLength(0);
    },
  );

  it('attacker: a report to a token made with another key is dropped as bad_token', async () => {
    const s = setup();
    const forged = verpAddress('attacker-key-0123456789abcdef0123', 'bounces.acme.test', s.id, RCPT)!;
    const out = await handleInbound(s.deps, bounceReport('postfix-user-unknown.eml', { VERP: forged, RCPT }), [forged]);
    expect(out).toEqual({ kind: 'dropped', reason: 'bad_token' });
    expect(s.recorded).toHaveLength(0);
  });

  it('attacker: a feedback report to the complaint address with no token at all is dropped', async () => {
    const s = setup();
    const raw = bounceReport('yahoo-arf.eml', { VERP: 'someone@acme.test', RCPT, COMPLAINT });
    expect(await handleInbound(s.deps, raw, [COMPLAINT])).toEqual({ kind: 'dropped', reason: 'no_token' });
  });

  it('plain mail that is no report is dropped as not_a_report', async () => {
    const s = setup();
    const raw = Buffer.from(`From: x@y.example\r\nTo: ${s.verp()}\r\nSubject: hello\r\n\r\nhi\r\n`);
    expect(await handleInbound(s.deps, raw, [s.verp()])).toEqual({ kind: 'dropped', reason: 'not_a_report' });
  });
});
