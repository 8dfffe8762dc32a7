import { describe, expect, it } from 'vitest';
import { providerMessageIdOf } from '../../src/delivery/transports/smtp-reply.js';
import {
  deliveryHarness,
  type MessageView,
  PARAMS,
  privateHeaders,
  row,
  seedSmtpOrg,
  send,
  smtpService,
  view,
} from '../support/delivery.js';
import { PUBLIC_KEY } from '../support/seed.js';
import { smtpError } from '../support/smtp-sink.js';
import { heldRelay } from '../support/held-relay.js';
import { ev, recorder } from '../support/events/record.js';
import { describeDialects } from '../support/dialects.js';

const SES_ID = '0100018c1f2e3d4c-5b6a7988-1234-4abc-9def-0123456789ab-000000';
const SES_ID_2 = '0100018c1f2e3d4c-5b6a7988-1234-4abc-9def-0123456789ac-000000';
const OWNER = 'owner@acme.test';
const AUDIT = 'audit@acme.test';

describe("the provider message id in a relay's final 250 reply", () => {
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

describeDialects('the worker stores the provider message id at hand-off, on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  /**
   * A relay that answers DATA as SES does: `250 Ok <ses-message-id>` (`reply` may differ per
   * DATA, n = 1 the first); `refuse` answers RCPT TO of an address with an error instead.
   */
  async function sesLikeRelay(
    reply: string | ((n: number) => string),
    refuse?: (address: string, n: number) => Error | undefined,
  ): Promise<number> {
    return (await heldRelay(h.closer, reply, { held: false, ...(refuse === undefined ? {} : { rcpt: refuse }) })).port;
  }

  it.skipIf(skip)(
    'SES-style reply: stored on the message, on the sent event, and an SES event naming it is matched',
    async () => {
      const t = await h.app();
      const port = await sesLikeRelay(`Ok ${SES_ID}`);
      await seedSmtpOrg(t.store, smtpService(port));
      const { worker } = h.worker(t);
      const id = await send(t);
      expect(await worker.runOnce()).toBe(1);
      const m = await row(t.store, id);
      expect(m.status).toBe('sent');
      expect(m.provider_message_id).toBe(SES_ID);
      const v = (await view(t, id)) as MessageView & { provider_message_id?: string };
      // The id is on the message as the API shows it and on the `sent` event, for private keys.
      expect(v.provider_message_id).toBe(SES_ID);
      expect(v.events.find((e) => e.type === 'sent')?.details).toMatchObject({
        response: `250 Ok ${SES_ID}`,
        provider_message_id: SES_ID,
        service_id: 'smtp',
      });

      const r = recorder(t.store, t.clock);
      const byProviderId = ev('delivered', 'ignored', 'owner@acme.test', { source: 'ses', match: { providerMessageId: SES_ID } });
      expect(await r.record([byProviderId])).toEqual(['recorded']);
      // Another organization's verified source naming the same provider id reaches nothing.
      expect(await r.record([{ ...byProviderId, eventKey: 'other-org' }], { orgId: 'other', serviceId: 'x' })).toEqual([
        'unmatched',
      ]);
      expect((await view(t, id)).events.at(-1)).toMatchObject({
        type: 'delivered',
        provider: 'ses',
        recipient: 'owner@acme.test',
      });
    },
  );

  it.skipIf(skip)('a reply with no id the rule trusts: none stored', async () => {
    const t = await h.app();
    const port = await sesLikeRelay('OK: message queued');
    await seedSmtpOrg(t.store, smtpService(port));
    const { worker } = h.worker(t);
    const id = await send(t);
    expect(await worker.runOnce()).toBe(1);
    expect((await row(t.store, id)).provider_message_id).toBeNull();
    const v = await view(t, id);
    expect(v).not.toHaveProperty('provider_message_id');
    expect(v.events.find((e) => e.type === 'sent')?.details).not.toHaveProperty('provider_message_id');
  });

  it.skipIf(skip)(
    "recipients settled one by one: each `sent` event names its own hand-off's id, the message the latest",
    async () => {
      const t = await h.app();
      // The Cc is refused for now on its first RCPT; each DATA gets an id of its own.
      const port = await sesLikeRelay(
        (n) => `Ok ${n === 1 ? SES_ID : SES_ID_2}`,
        (address, n) => (address === AUDIT && n === 1 ? smtpError(451, '4.2.1 Mailbox busy, try later') : undefined),
      );
      await seedSmtpOrg(t.store, smtpService(port));
      const { worker } = h.worker(t);
      const id = await send(t);
      expect(await worker.runOnce()).toBe(1);
      const first = await row(t.store, id);
      expect(first.status).toBe('queued');
      expect(first.provider_message_id).toBe(SES_ID);
      const v1 = (await view(t, id)) as MessageView & { provider_message_id?: string };
      expect(v1.provider_message_id).toBe(SES_ID);
      expect(v1.events.filter((e) => e.type === 'sent').map((e) => e.details)).toEqual([
        { response: `250 Ok ${SES_ID}`, recipients: [OWNER], provider_message_id: SES_ID, service_id: 'smtp' },
      ]);

      t.clock.set(first.next_attempt_at ?? 0);
      expect(await worker.runOnce()).toBe(1);
      const second = await row(t.store, id);
      expect(second.status).toBe('sent');
      expect(second.provider_message_id).toBe(SES_ID_2);
      const v2 = (await view(t, id)) as MessageView & { provider_message_id?: string };
      expect(v2.provider_message_id).toBe(SES_ID_2);
      expect(v2.events.filter((e) => e.type === 'sent').map((e) => e.details?.provider_message_id)).toEqual([SES_ID, SES_ID_2]);

      // An event naming the latest hand-off's id finds the message (the retry's recipient).
      const r = recorder(t.store, t.clock);
      expect(
        await r.record([ev('delivered', 'ignored', AUDIT, { source: 'ses', match: { providerMessageId: SES_ID_2 } })]),
      ).toEqual(['recorded']);
    },
  );

  it.skipIf(skip)("a public key with the status token sees neither the message's provider id nor the event's", async () => {
    const t = await h.app();
    const port = await sesLikeRelay(`Ok ${SES_ID}`);
    await seedSmtpOrg(t.store, smtpService(port));
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/send',
      headers: privateHeaders,
      payload: { template_id: 'contact', template_params: PARAMS },
    });
    const { message_id: id, status_token: token } = res.json() as { message_id: string; status_token: string };
    const { worker } = h.worker(t);
    expect(await worker.runOnce()).toBe(1);
    const pub = await t.app.inject({
      method: 'GET',
      url: `/v1/messages/${id}`,
      headers: { 'x-mail-public-key': PUBLIC_KEY, origin: 'https://example.com', 'x-mail-status-token': token },
    });
    expect(pub.statusCode, pub.body).toBe(200);
    expect(pub.json()).not.toHaveProperty('provider_message_id');
    expect(pub.body).not.toContain(SES_ID);
  });

  it.skipIf(skip)('the OpenAPI document describes provider_message_id on the message and on the sent event', async () => {
    const t = await h.app();
    const res = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json() as {
      paths: Record<
        string,
        {
          get?: {
            responses?: Record<string, { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> }>;
          };
        }
      >;
    };
    const ok = doc.paths['/v1/messages/{id}']?.get?.responses?.['200']?.content?.['application/json']?.schema;
    expect(JSON.stringify(ok?.properties?.provider_message_id)).toMatch(/Private-key reads only/);
    expect(JSON.stringify(ok?.properties?.events)).toContain('details.provider_message_id');
  });
});
