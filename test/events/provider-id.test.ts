import { SMTPServer } from 'smtp-server';
import { describe, expect, it } from 'vitest';
import { providerMessageIdOf } from '../../src/delivery/transports/smtp-reply.js';
import { DIALECTS, postgresAvailable } from '../support/stores.js';
import { deliveryHarness, row, seedSmtpOrg, send, smtpService, view } from '../delivery/harness.js';
import { ev, recorder } from './support.js';

const pgUp = await postgresAvailable();

const SES_ID = '0100018c1f2e3d4c-5b6a7988-1234-4abc-9def-0123456789ab-000000';

describe('the provider message id in a relay\'s final 250 reply', () => {
  it.each([
    [`250 Ok ${SES_ID}`, SES_ID],
    [`250 2.0.0 Ok ${SES_ID}`, SES_ID],
    ['250 2.0.0 Ok: queued as 4XyZ9k1LmQz', '4XyZ9k1LmQz'],
    ['250 Ok: queued as S7lR_ab-cD.filter01', 'S7lR_ab-cD.filter01'],
  ])('%s → %s', (reply, id) => {
    expect(providerMessageIdOf(reply)).toBe(id);
  });

  it.each([
    '250 OK: message queued',
    '250 Great success',
    '250 Ok',
    '250 Ok queued as',
    '250 2.0.0 Ok: queued as a"b;c d',
    '250 Ok 0100018c-not-an-ses-id',
    `550 Ok ${SES_ID}`,
    `250 Ok: queued as ${'a'.repeat(300)}`,
  ])('%s → none', (reply) => {
    expect(providerMessageIdOf(reply)).toBeUndefined();
  });
});

describe.each(DIALECTS)('the worker stores the provider message id at hand-off, on %s', (dialect) => {
  const skip = dialect === 'postgres' && !pgUp;
  const h = deliveryHarness(dialect);

  /** A relay that answers DATA as SES does: `250 Ok <ses-message-id>`. */
  async function sesLikeRelay(reply: string): Promise<number> {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, _session, callback) {
        stream.on('data', () => undefined);
        stream.on('end', () => callback(null, reply));
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    h.closer.defer(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const address = server.server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return address.port;
  }

  it.skipIf(skip)('SES-style reply: stored on the message, on the sent event, and an SES event naming it is matched', async () => {
    const t = await h.app();
    const port = await sesLikeRelay(`Ok ${SES_ID}`);
    await seedSmtpOrg(t.store, smtpService(port));
    const { worker } = h.worker(t);
    const id = await send(t);
    expect(await worker.runOnce()).toBe(1);
    const m = await row(t.store, id);
    expect(m.status).toBe('sent');
    expect(m.provider_message_id).toBe(SES_ID);
    expect((await view(t, id)).events.find((e) => e.type === 'sent')?.details?.response).toBe(`250 Ok ${SES_ID}`);

    const r = recorder(t.store, t.clock);
    const byProviderId = ev('delivered', 'ignored', 'owner@acme.test', { source: 'ses', match: { providerMessageId: SES_ID } });
    expect(await r.record([byProviderId])).toEqual(['recorded']);
    // Another organization's verified source naming the same provider id reaches nothing.
    expect(await r.record([{ ...byProviderId, eventKey: 'other-org' }], { orgId: 'other', serviceId: 'x' })).toEqual(['unmatched']);
    expect((await view(t, id)).events.at(-1)).toMatchObject({ type: 'delivered', provider: 'ses', recipient: 'owner@acme.test' });
  });

  it.skipIf(skip)('a reply with no id the rule trusts: none stored', async () => {
    const t = await h.app();
    const port = await sesLikeRelay('OK: message queued');
    await seedSmtpOrg(t.store, smtpService(port));
    const { worker } = h.worker(t);
    const id = await send(t);
    expect(await worker.runOnce()).toBe(1);
    expect((await row(t.store, id)).provider_message_id).toBeNull();
  });
});
