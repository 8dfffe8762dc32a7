import { expect, it } from 'vitest';
import { PUBLIC_KEY } from '../support/seed.js';
import { deliveryHarness, privateHeaders } from '../support/delivery.js';
import { ev, recorder } from '../support/events/record.js';
import { timelineEntry } from '../../src/http/routes/timeline.js';
import { describeDialects } from '../support/dialects.js';

const OWNER = 'owner@acme.test';
const AUDIT = 'audit@acme.test';
const FORWARDED = 'ada.forward@elsewhere.test';

describeDialects('the timeline of GET /v1/messages/{id} after hand-off, on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)(
    'a public key with the status token sees the events without addresses or remote text; a private key sees them',
    async () => {
      const { t } = await h.smtpApp();
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/send',
        headers: privateHeaders,
        payload: { template_id: 'contact', template_params: { name: 'Ada', email: 'ada@example.org', message: 'Hi' } },
      });
      const { message_id: id, status_token: token } = res.json() as { message_id: string; status_token: string };
      const { worker } = h.worker(t);
      expect(await worker.runOnce()).toBe(1);
      const r = recorder(t.store, t.clock, { orgId: null, serviceId: null });
      // A DSN as the inbound listener reads it: the report names a forwarded address, and the
      // remote's diagnostic quotes the recipient.
      const diagnostic = `550 5.1.1 <${OWNER}>: Recipient address rejected: User unknown`;
      expect(
        await r.record([
          ev('bounced', id, OWNER, {
            source: 'dsn',
            bounceType: 'hard',
            status: '5.1.1',
            reason: diagnostic,
            extra: { reported_recipient: FORWARDED },
          }),
        ]),
      ).toEqual(['recorded']);

      const pub = await t.app.inject({
        method: 'GET',
        url: `/v1/messages/${id}`,
        headers: { 'x-mail-public-key': PUBLIC_KEY, origin: 'https://example.com', 'x-mail-status-token': token },
      });
      expect(pub.statusCode, pub.body).toBe(200);
      const pubView = pub.json() as { status: string; events: Array<Record<string, unknown>> };
      // The Cc was not bounced: the message stays sent.
      expect(pubView.status).toBe('sent');
      expect(pubView.events.at(-1)).toEqual({
        type: 'bounced',
        at: '2026-01-01T01:00:00.000Z',
        provider: 'dsn',
        bounce_type: 'hard',
        status: '5.1.1',
        details: { provider: 'dsn', bounce_type: 'hard', status: '5.1.1' },
      });
      // Mailroom's own codes are still there; the relay's 250 reply (`response`) is not.
      expect(pubView.events.map((e) => e.type)).toEqual(['queued', 'sending', 'sent', 'bounced']);
      expect(pubView.events[1]).toEqual({ type: 'sending', at: expect.any(String) as string, details: { attempt: 1 } });
      expect(pubView.events[2]).toEqual({ type: 'sent', at: expect.any(String) as string });
      for (const leak of [OWNER, AUDIT, FORWARDED, 'reported_recipient', 'User unknown', '@'])
        expect(pub.body).not.toContain(leak);

      const priv = await t.app.inject({ method: 'GET', url: `/v1/messages/${id}`, headers: privateHeaders });
      const privView = priv.json() as {
        events: Array<Record<string, unknown>>;
        recipients: Array<{ address: string; state: string }>;
      };
      expect(privView.events.at(-1)).toMatchObject({
        recipient: OWNER,
        reason: diagnostic,
        bounce_type: 'hard',
        details: { recipient: OWNER, reason: diagnostic, extra: { reported_recipient: FORWARDED } },
      });
      expect(privView.events[2]).toMatchObject({ type: 'sent', details: { response: expect.stringMatching(/^250 /) as string } });
      expect(privView.recipients).toContainEqual({ address: OWNER, kind: 'to', state: 'bounced', reason: diagnostic });
    },
  );

  it.skipIf(skip)(
    "a public key still sees mailroom's own reasons (a released message's credits_added), never a remote's",
    async () => {
      const t = await h.app();
      const entry = (type: string, detail: Record<string, unknown>) => timelineEntry({ type, at: t.clock.now(), detail }, false);
      expect(entry('released', { reason: 'credits_added' })).toMatchObject({
        reason: 'credits_added',
        details: { reason: 'credits_added' },
      });
      expect(entry('queued', { reason: 'lease_expired' })).toMatchObject({ reason: 'lease_expired' });
      expect(
        entry('deferred', { recipient: OWNER, reason: `451 4.2.0 <${OWNER}> greylisted`, retry_at: '2026-01-01T00:05:00.000Z' }),
      ).toEqual({ type: 'deferred', at: '2026-01-01T00:00:00.000Z', details: { retry_at: '2026-01-01T00:05:00.000Z' } });
      expect(entry('held_service_error', { reason: `535 5.7.8 login failed for ${OWNER}` })).toEqual({
        type: 'held_service_error',
        at: '2026-01-01T00:00:00.000Z',
      });
      expect(entry('bounced', { recipient: OWNER, reason: '550 no', hard: true })).toEqual({
        type: 'bounced',
        at: '2026-01-01T00:00:00.000Z',
        bounce_type: 'hard',
        details: { hard: true },
      });
      // A message discarded because its recipients were suppressed names them in its reason.
      expect(entry('discarded', { reason: `recipients suppressed: ${OWNER}` })).toEqual({
        type: 'discarded',
        at: '2026-01-01T00:00:00.000Z',
      });
    },
  );

  it.skipIf(skip)('the OpenAPI document describes the timeline fields and the new recipient states', async () => {
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
    const events = JSON.stringify(ok?.properties?.events);
    for (const word of [
      'recipient',
      'reason',
      'provider',
      'bounce_type',
      'hard',
      'soft',
      'status',
      'details',
      'complained',
      'held_service_error',
    ])
      expect(events).toContain(word);
    const recipients = JSON.stringify(ok?.properties?.recipients);
    for (const word of ['delivered', 'complained', 'bounced']) expect(recipients).toContain(word);
  });
});
