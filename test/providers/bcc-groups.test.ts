import { describe, expect, it } from 'vitest';
import { DeliveryError, type DeliveryReceipt, type OutgoingEmail } from '../../src/delivery/transport.js';
import { postmarkTransport } from '../../src/delivery/transports/postmark.js';
import { sendGroups, type RecipientGroup } from '../../src/delivery/transports/provider-mail.js';
import { resendTransport } from '../../src/delivery/transports/resend.js';
import { startPostmark } from '../support/providers/fakes/postmark.js';
import { startResend } from '../support/providers/fakes/resend.js';
import { MAIL, serviceRow } from '../support/providers/transport.js';

/**
 * Only Bcc recipients owed (a retry): one request each (provider-mail.ts sendGroups). A later
 * request failing after an earlier one succeeded must not fail the send: the retry would send
 * the accepted ones again.
 */

const B1 = 'b1@example.com';
const B2 = 'b2@example.com';
const BCC_ONLY: OutgoingEmail = {
  ...MAIL,
  email: {
    ...MAIL.email,
    to: [],
    cc: [],
    bcc: [
      { name: '', address: B1 },
      { name: '', address: B2 },
    ],
  },
  envelopeTo: [B1, B2],
};

describe('Bcc-only groups', () => {
  it('postmark: the second request answers 503 → B1 sent, B2 refused for now; the retry for B2 sends nobody twice', async () => {
    const fake = await startPostmark();
    const t = postmarkTransport(serviceRow('postmark', { postmark: { server_token: fake.token, endpoint: fake.url } }, 'svc'), {
      dataDir: '/tmp',
    });
    try {
      fake.script({ path: '/email', status: 503, body: 'Service Unavailable', after: 1 });
      const receipt = await t.send(BCC_ONLY);
      expect(receipt.providerMessageId).toBe(fake.sent[0]!.messageId);
      expect(receipt.refused).toEqual([expect.objectContaining({ address: B2, kind: 'temporary' })]);
      // The worker's retry names only the recipients still owed.
      await t.send({ ...BCC_ONLY, envelopeTo: [B2] });
      expect(fake.sent.map((s) => s.json.To)).toEqual([B1, B2]);
    } finally {
      await t.close();
      await fake.close();
    }
  });

  it('resend: the second request answers 500 → B1 sent, B2 refused for now; the retry sends B2 once', async () => {
    const fake = await startResend();
    const t = resendTransport(serviceRow('resend', { resend: { api_key: fake.key, endpoint: fake.url } }, 'svc'), {
      dataDir: '/tmp',
    });
    try {
      fake.script({
        path: '/emails',
        status: 500,
        body: { statusCode: 500, name: 'application_error', message: 'An unexpected error occurred.' },
        after: 1,
      });
      const receipt = await t.send(BCC_ONLY);
      expect(receipt.refused).toEqual([expect.objectContaining({ address: B2, kind: 'temporary' })]);
      await t.send({ ...BCC_ONLY, envelopeTo: [B2] });
      expect(fake.sent.map((s) => s.json.to)).toEqual([[B1], [B2]]);
    } finally {
      await t.close();
      await fake.close();
    }
  });

  const group = (address: string): RecipientGroup => ({ to: [{ name: '', address }], cc: [], bcc: [] });
  const ok: DeliveryReceipt = { response: 'ok 1', providerMessageId: 'p1' };

  it(
    'sendGroups: the first failure is thrown; a later mailbox or permanent ' +
      'failure refuses its own address and goes on; a temporary one stops the rest',
    async () => {
      await expect(
        sendGroups('x', [group('a@x.test')], () => Promise.reject(new DeliveryError('service', 'bad key'))),
      ).rejects.toMatchObject({ kind: 'service' });
      await expect(sendGroups('x', [], () => Promise.resolve(ok))).rejects.toMatchObject({ kind: 'permanent' });
      const answers: Array<() => Promise<DeliveryReceipt>> = [
        () => Promise.resolve(ok),
        () =>
          Promise.reject(
            new DeliveryError(
              'mailbox',
              'inactive',
              ['b@x.test'],
              [{ address: 'b@x.test', kind: 'mailbox', reason: 'inactive' }],
            ),
          ),
        () => Promise.reject(new DeliveryError('permanent', 'invalid')),
        () => Promise.reject(new DeliveryError('service', 'account paused')),
        () => Promise.resolve(ok),
      ];
      let calls = 0;
      const receipt = await sendGroups(
        'x',
        ['a', 'b', 'c', 'd', 'e'].map((l) => group(`${l}@x.test`)),
        () => answers[calls++]!(),
      );
      expect(calls).toBe(4);
      expect(receipt).toMatchObject({ response: 'ok 1', providerMessageId: 'p1' });
      expect(receipt.refused?.map((r) => [r.address, r.kind])).toEqual([
        ['b@x.test', 'mailbox'],
        ['c@x.test', 'permanent'],
        ['d@x.test', 'temporary'],
        ['e@x.test', 'temporary'],
      ]);
    },
  );
});
