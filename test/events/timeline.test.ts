import { describe, expect, it } from 'vitest';
import { PUBLIC_KEY } from '../support/seed.js';
import { DIALECTS, postgresAvailable } from '../support/stores.js';
import { deliveryHarness, privateHeaders, seedSmtpOrg, smtpService } from '../delivery/harness.js';
import { ev, recorder } from './support.js';

const pgUp = await postgresAvailable();

const OWNER = 'owner@acme.test';

describe.each(DIALECTS)('the timeline of GET /v1/messages/{id} after hand-off, on %s', (dialect) => {
  const skip = dialect === 'postgres' && !pgUp;
  const h = deliveryHarness(dialect);

  it.skipIf(skip)('a public key with the status token sees the events without addresses; a private key sees them', async () => {
    const t = await h.app();
    const sink = await h.sink(t);
    await seedSmtpOrg(t.store, smtpService(sink.port));
    const res = await t.app.inject({ method: 'POST', url: '/v1/send', headers: privateHeaders, payload: { template_id: 'contact', template_params: { name: 'Ada', email: 'ada@example.org', message: 'Hi' } } });
    const { message_id: id, status_token: token } = res.json() as { message_id: string; status_token: string };
    const { worker } = h.worker(t);
    expect(await worker.runOnce()).toBe(1);
    await recorder(t.store, t.clock).record([ev('bounced', id, OWNER, { bounceType: 'hard', status: '5.1.1', reason: 'no such user', extra: { bounce_sub_type: 'NoEmail' } })]);

    const pub = await t.app.inject({ method: 'GET', url: `/v1/messages/${id}`, headers: { 'x-mail-public-key': PUBLIC_KEY, origin: 'https://example.com', 'x-mail-status-token': token } });
    expect(pub.statusCode, pub.body).toBe(200);
    const pubView = pub.json() as { status: string; events: Array<Record<string, unknown>> };
    // The Cc was not bounced: the message stays sent.
    expect(pubView.status).toBe('sent');
    expect(pubView.events.at(-1)).toEqual({
      type: 'bounced', at: '2026-01-01T01:00:00.000Z', reason: 'no such user', provider: 'postmark', bounce_type: 'hard', status: '5.1.1',
      details: { provider: 'postmark', reason: 'no such user', bounce_type: 'hard', status: '5.1.1', extra: { bounce_sub_type: 'NoEmail' } },
    });
    expect(pub.body).not.toContain(OWNER);

    const priv = await t.app.inject({ method: 'GET', url: `/v1/messages/${id}`, headers: privateHeaders });
    const privView = priv.json() as { events: Array<Record<string, unknown>>; recipients: Array<{ address: string; state: string }> };
    expect(privView.events.at(-1)).toMatchObject({ recipient: OWNER, bounce_type: 'hard', details: { recipient: OWNER } });
    expect(privView.recipients).toContainEqual({ address: OWNER, kind: 'to', state: 'bounced', reason: 'no such user' });
  });

  it.skipIf(skip)('the OpenAPI document describes the timeline fields and the new recipient states', async () => {
    const t = await h.app();
    const res = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json() as { paths: Record<string, { get?: { responses?: Record<string, { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> }> } }> };
    const ok = doc.paths['/v1/messages/{id}']?.get?.responses?.['200']?.content?.['application/json']?.schema;
    const events = JSON.stringify(ok?.properties?.events);
    for (const word of ['recipient', 'reason', 'provider', 'bounce_type', 'hard', 'soft', 'status', 'details', 'complained', 'held_service_error']) expect(events).toContain(word);
    const recipients = JSON.stringify(ok?.properties?.recipients);
    for (const word of ['delivered', 'complained', 'bounced']) expect(recipients).toContain(word);
  });
});
