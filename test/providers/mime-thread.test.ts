import { expect, it } from 'vitest';
import { startMailgunFake } from '../support/providers/fakes/mailgun.js';
import { startSesFake } from '../support/providers/fakes/ses.js';
import { ATTACHMENTS, providerHarness } from '../support/providers/send-path.js';
import { view } from '../support/delivery.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Mailgun and SES as `mailroom worker` runs them: registered in TRANSPORTS and run in the
 * transport thread (compiled, from dist/), the email and its attachments crossing by structured
 * clone, a failure's kind crossing back.
 */
describeDialects('Mailgun and SES in the transport thread on %s', (dialect, skip) => {
  const h = providerHarness(dialect);

  it.skipIf(skip)('mailgun: sent with attachments byte for byte and the id recorded; a wrong key held', async () => {
    const fake = await startMailgunFake({ domain: 'mg.acme.test', apiKey: 'key-thread' }, h.closer);
    const s = await h.setup('mailgun', undefined, {
      mailgun: { domain: 'mg.acme.test', api_key: 'key-thread', endpoint: fake.url },
    });
    const id = await s.send();
    expect(await s.worker.runOnce()).toBe(1);
    expect((await view(s.t, id)).status).toBe('sent');
    const got = fake.received[0]!;
    for (const [i, a] of ATTACHMENTS.entries()) expect(Buffer.compare(got.parsed.attachments[i]!.content, a.content)).toBe(0);
    expect((await s.t.store.messages.get('acme', id))!.provider_message_id).toBe(got.id.slice(1, -1));

    await s.setSettings({ mailgun: { domain: 'mg.acme.test', api_key: 'key-wrong', endpoint: fake.url } });
    const held = await s.send(false);
    expect(await s.worker.runOnce()).toBe(1);
    expect((await s.t.store.messages.get('acme', held))!.status).toBe('held_service_error');
  });

  it.skipIf(skip)(
    'ses: sent, signed with the configured key, and the MessageId recorded; a rejected message failed',
    async () => {
      const creds = { accessKeyId: 'AKIATHREAD0000000001', secretAccessKey: 'thread-secret', region: 'us-east-1' };
      const fake = await startSesFake(creds, h.closer);
      const s = await h.setup('ses', undefined, {
        ses: {
          region: creds.region,
          access_key_id: creds.accessKeyId,
          secret_access_key: creds.secretAccessKey,
          endpoint: fake.url,
        },
      });
      const id = await s.send();
      expect(await s.worker.runOnce()).toBe(1);
      expect((await view(s.t, id)).status).toBe('sent');
      expect((await s.t.store.messages.get('acme', id))!.provider_message_id).toBe(fake.received[0]!.messageId);

      fake.failNext({ status: 400, type: 'MessageRejected', message: 'Illegal address' });
      const failed = await s.send(false);
      expect(await s.worker.runOnce()).toBe(1);
      const m = await s.t.store.messages.get('acme', failed);
      expect([m!.status, m!.last_error]).toEqual(['failed', 'ses 400 MessageRejected: Illegal address']);
    },
  );
});
