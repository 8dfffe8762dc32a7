import { describe, expect, it } from 'vitest';
import { addressees } from '../../src/delivery/recipients.js';
import { recipientDigest } from '../../src/delivery/verp.js';
import { addressOf } from '../../src/inbound/report.js';
import { asciiDomain, canonicalAddress } from '../../src/domain/addresses.js';
import { isEmailAddress } from '../../src/templates/params.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { admin } from '../support/admin.js';
import { bearer, expectError } from '../support/http.js';
import { PRIVATE_KEY, seedOrg } from '../support/seed.js';
import { sendOk, send } from '../support/send.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Issue 25: IDN addresses follow one rule everywhere (src/domain/addresses.ts): the domain is
 * keyed by its A-label, lower-cased; the local part stays UTF-8 (NFC, lower-cased). Before, the
 * lists stored `zoë@exämple.com` and `zoë@xn--exmple-cua.com` as two entries that never met,
 * and a send to `zoë@exämple.com` was refused as no e-mail address.
 */
const UNICODE = 'zoë@exämple.com';
const ASCII = 'zoë@xn--exmple-cua.com';

describe('canonicalAddress', () => {
  it('keys every spelling of an IDN address alike and leaves ASCII addresses lower-cased as before', () => {
    for (const spelling of [UNICODE, ASCII, 'ZOË@EXÄMPLE.COM', 'zoe\u0308@exa\u0308mple.com', ' Zoë@Xn--Exmple-Cua.Com ']) {
      expect(canonicalAddress(spelling), spelling).toBe(ASCII);
    }
    expect(canonicalAddress(' Ann@Example.COM')).toBe('ann@example.com');
    expect(canonicalAddress('@exämple.com')).toBe('@xn--exmple-cua.com');
    expect(canonicalAddress('Kundennummer 4711')).toBe('kundennummer 4711');
  });

  it('takes host names only as domains: no IPs, ports, percent escapes or undecodable A-labels', () => {
    expect(asciiDomain('例え.テスト')).toBe('xn--r8jz45g.xn--zckzah');
    for (const bad of [
      '192.0.2.1',
      '0x7f.1',
      'localhost',
      'example.com:80',
      'ex%41mple.com',
      'xn--zz.com',
      '-a.com',
      'a..b.com',
      '',
    ]) {
      expect(asciiDomain(bad), bad).toBeUndefined();
    }
  });

  it('accepts an IDN domain in a recipient and still refuses what is no address', () => {
    expect(isEmailAddress(UNICODE)).toBe(true);
    expect(isEmailAddress(ASCII)).toBe(true);
    expect(isEmailAddress('zoë@exämple')).toBe(false);
    expect(isEmailAddress('zoë@ex ämple.com')).toBe(false);
  });

  it('a bounce report names the recipient by the same key, and its VERP token does not depend on the spelling', () => {
    expect(addressOf('rfc822; <Zoë@Exämple.com>')).toBe(ASCII);
    expect(recipientDigest(UNICODE).equals(recipientDigest(ASCII))).toBe(true);
    // ASCII addresses hash as before the rule, so tokens already sent still match.
    expect(recipientDigest(' Ann@Example.org').equals(recipientDigest('ann@example.org'))).toBe(true);
  });

  it('drops a recipient suppressed since acceptance whatever the spelling the message used', () => {
    const email = {
      subject: 's',
      from: { name: '', address: 'a@acme.test' },
      reply_to: [],
      to: [{ name: 'Zoë', address: 'Zoë@Exämple.com' }],
      cc: [],
      bcc: [],
      html: '',
      text: '',
    };
    const out = addressees(email, new Map(), new Set([ASCII]));
    expect(out.suppressed).toEqual([ASCII]);
    expect(out.email.to).toEqual([]);
  });
});

describeDialects('IDN addresses on the lists and at send on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  const seed = () =>
    seedOrg(t.store, {
      templates: [
        {
          id: 'direct',
          subject: 'Hi',
          to: '{{to}}',
          from_email: 'noreply@acme.test',
          html: '<p>Hi</p>',
          text: 'Hi',
          allow_dynamic_recipients: true,
          params: [{ name: 'to', type: 'string', required: true }],
        },
      ],
    });
  const sendTo = (to: string) => send(t, { template_id: 'direct', template_params: { to } }, bearer(PRIVATE_KEY));

  it.skipIf(skip)('a send to an IDN address is accepted and its recipient is stored by its A-label', async () => {
    await seed();
    const accepted = await sendOk(t, { template_id: 'direct', template_params: { to: `Zoë <${UNICODE}>` } }, bearer(PRIVATE_KEY));
    const read = await t.app.inject({ method: 'GET', url: `/v1/messages/${accepted.message_id}`, headers: bearer(PRIVATE_KEY) });
    expect(read.json<{ recipients: Array<{ address: string }> }>().recipients.map((r) => r.address)).toEqual([ASCII]);
    // The history's exact-recipient filter finds it by either spelling.
    for (const q of [UNICODE, ASCII]) {
      const page = await t.app.inject({
        method: 'GET',
        url: `/v1/history?q=${encodeURIComponent(q)}`,
        headers: bearer(PRIVATE_KEY),
      });
      expect(page.json<{ items: unknown[] }>().items, q).toHaveLength(1);
    }
  });

  for (const [added, sent] of [
    [UNICODE, ASCII],
    [ASCII, UNICODE],
  ] as const) {
    it.skipIf(skip)(`a suppression added as ${added} refuses a send to ${sent}, and is one entry`, async () => {
      await seed();
      const res = await admin(t, 'POST', '/organizations/acme/suppressions', { email: added });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json<{ email: string }>().email).toBe(ASCII);
      expect((await admin(t, 'POST', '/organizations/acme/suppressions', { email: sent })).statusCode).toBe(200);
      const err = expectError(await sendTo(sent), 451, 'recipient_suppressed');
      expect(err.details).toEqual({ recipients: [ASCII] });
      // Removing it by the other spelling removes the one entry.
      expect((await admin(t, 'DELETE', `/organizations/acme/suppressions/${encodeURIComponent(sent)}`)).statusCode).toBe(204);
      expect((await sendTo(sent)).statusCode).toBe(202);
    });

    it.skipIf(skip)(`a block-list entry added as ${added} refuses a send to ${sent}; a domain entry too`, async () => {
      await seed();
      const res = await admin(t, 'POST', '/organizations/acme/block-list', { value: added });
      expect(res.json(), res.body).toEqual({ value: ASCII });
      expectError(await sendTo(sent), 403, 'recipient_blocked');
      expect((await admin(t, 'DELETE', `/organizations/acme/block-list/${encodeURIComponent(sent)}`)).statusCode).toBe(204);
      expect((await sendTo(sent)).statusCode).toBe(202);
      await admin(t, 'POST', '/organizations/acme/block-list', { value: `@${added.split('@')[1]}` });
      expectError(await sendTo(`ann@${sent.split('@')[1]}`), 403, 'recipient_blocked');
    });
  }

  it.skipIf(skip)('list search finds an A-label entry by the domain as the UI shows it', async () => {
    await seed();
    await admin(t, 'POST', '/organizations/acme/suppressions', { email: UNICODE });
    await admin(t, 'POST', '/organizations/acme/suppressions', { email: 'ann@example.org' });
    const page = await admin(t, 'GET', `/organizations/acme/suppressions?q=${encodeURIComponent('exämple.com')}`);
    expect(page.json<{ items: Array<{ email: string }> }>().items.map((i) => i.email)).toEqual([ASCII]);
  });

  it.skipIf(skip)('the config file and an organization PUT store list entries by the same rule', async () => {
    await seedOrg(t.store, {
      suppressions: [{ email: 'ZOË@EXÄMPLE.COM' }],
      security: { block_list: { list: ['@Exämple.org'] } },
    });
    expect((await t.store.suppressions.list('acme')).map((s) => s.email)).toEqual([ASCII]);
    expect(await t.store.blockList.list('acme')).toEqual(['@xn--exmple-cua.org']);
  });
});
