import { describe, expect, it } from 'vitest';
import { messageEventPayload, type PayloadSource } from '../../src/webhooks/payload.js';
import { describeDialects } from '../support/dialects.js';
import { insertEndpoint, testDispatcher, useWebhookStore } from '../support/webhooks/dispatch.js';
import { startReceiver, testSecret } from '../support/webhooks/receiver.js';
import { insertModeMessage } from '../support/test-mode.js';

/**
 * Issue 27 §3.5: one set of endpoints gets live and test events, told apart by `data.mode`;
 * every event of a message sent to a simulator address says `details.simulated: true`, read
 * from the message (its events have many writers), so no writer has to remember to stamp it.
 */

const SECRET = testSecret(11);

const source = (over: Partial<PayloadSource>): PayloadSource => ({
  eventType: 'message.delivered',
  at: Date.UTC(2026, 0, 1, 12),
  detail: null,
  messageId: 'msg_1',
  orgId: 'acme',
  templateId: 'contact',
  serviceId: 'outbox',
  messageStatus: 'delivered',
  sequence: 3,
  mode: 'live',
  simulated: false,
  ...over,
});

interface Data {
  mode?: string;
  details?: Record<string, unknown>;
}
const dataOf = (body: string) => (JSON.parse(body) as { data: Data }).data;

describe('the payload of a message event', () => {
  it('always names the mode, and adds details.simulated only to simulated messages', () => {
    expect(dataOf(messageEventPayload(source({})))).toMatchObject({ mode: 'live' });
    expect(dataOf(messageEventPayload(source({}))).details).toBeUndefined();
    expect(dataOf(messageEventPayload(source({ mode: 'test' }))).mode).toBe('test');
    const simulated = dataOf(
      messageEventPayload(source({ simulated: true, detail: JSON.stringify({ provider: 'simulator', status: '2.0.0' }) })),
    );
    expect(simulated.details).toEqual({ status: '2.0.0', simulated: true });
    expect(dataOf(messageEventPayload(source({ simulated: true }))).details).toEqual({ simulated: true });
  });
});

describeDialects('webhook bodies of test and simulated messages on %s', (dialect, skip) => {
  const t = useWebhookStore(dialect, skip);

  it.skipIf(t.skip)('carry the message mode and the simulated flag, signed like any other', async () => {
    const r = await startReceiver([SECRET], t.closer);
    await insertEndpoint(t.store, { id: 'wh_1', url: r.url, secret: SECRET }, t.clock.now());
    const d = testDispatcher(t.store, t.clock, t.closer);
    const now = t.clock.now();
    const live = await insertModeMessage(t.store, undefined, { to: ['ada@example.org'], createdAt: now });
    const test = await insertModeMessage(t.store, undefined, { to: ['ada@example.org'], createdAt: now, mode: 'test' });
    const sim = await insertModeMessage(t.store, undefined, {
      to: ['delivered@simulator.mailroom.test'],
      createdAt: now,
      simulated: true,
    });
    await d.pump();
    const byMessage = new Map(
      r.received.map((x) => {
        const data = (x.payload as { data: Data & { message_id: string } }).data;
        return [data.message_id, data];
      }),
    );
    expect(r.received.every((x) => x.verifiedWith.length === 1)).toBe(true);
    expect(byMessage.get(live)).toMatchObject({ mode: 'live' });
    expect(byMessage.get(live)?.details?.simulated).toBeUndefined();
    expect(byMessage.get(test)).toMatchObject({ mode: 'test' });
    expect(byMessage.get(test)?.details?.simulated).toBeUndefined();
    expect(byMessage.get(sim)).toMatchObject({ mode: 'live', details: { simulated: true } });
  });
});
