import { expect, it } from 'vitest';
import { postmarkTransport } from '../../src/delivery/transports/postmark.js';
import { sendgridTransport } from '../../src/delivery/transports/sendgrid.js';
import { closerPerTest } from '../support/cleanup.js';
import type { DIALECTS } from '../support/stores.js';
import { startPostmark, type PostmarkFake } from '../support/providers/fakes/postmark.js';
import { startSendgrid, type SendgridFake } from '../support/providers/fakes/sendgrid.js';
import { waitFor } from '../support/smtp-sink.js';
import { insertQueued, privateHeaders } from '../support/delivery.js';
import { failoverSetup, type FailoverSetup } from '../support/failover.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Failover between HTTP providers: `primary` is Postmark (failing over to `backup`), `backup` is
 * SendGrid, each a loopback fake speaking its API. The failover harness's SMTP services are
 * replaced by these two; its breakers, clock and retry policy are used as they are.
 */

/** Each message id (our metadata at Postmark, custom_args at SendGrid) and how many times it was accepted. */
function deliveries(postmark: PostmarkFake, sendgrid: SendgridFake): Map<string, number> {
  const ids = [
    ...postmark.sent.map((s) => (s.json.Metadata as Record<string, unknown> | undefined)?.mailroom_message_id),
    ...sendgrid.sent.map((s) => (s.json.custom_args as Record<string, unknown> | undefined)?.mailroom_message_id),
  ];
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(String(id), (counts.get(String(id)) ?? 0) + 1);
  return counts;
}

async function viaOf(s: FailoverSetup, id: string): Promise<{ status: string; sent_via?: string }> {
  const res = await s.app.inject({ method: 'GET', url: `/v1/messages/${id}`, headers: privateHeaders });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ status: string; sent_via?: string }>();
}

/** Postmark as the primary service failing over to SendGrid, both faked on loopback, and a worker. */
async function postmarkThenSendgrid(dialect: (typeof DIALECTS)[number], closer: ReturnType<typeof closerPerTest>) {
  const s = await failoverSetup(dialect, closer);
  const postmark = await startPostmark();
  closer.defer(() => postmark.close());
  const sendgrid = await startSendgrid();
  closer.defer(() => sendgrid.close());
  const now = s.clock.now();
  await s.store.services.put(
    'acme',
    'primary',
    {
      provider: 'postmark',
      settings: { postmark: { server_token: postmark.token, endpoint: postmark.url }, failover: ['backup'] },
      is_default: true,
      max_per_second: null,
    },
    now,
  );
  await s.store.services.put(
    'acme',
    'backup',
    {
      provider: 'sendgrid',
      settings: { sendgrid: { api_key: sendgrid.key, endpoint: sendgrid.url } },
      is_default: false,
      max_per_second: null,
    },
    now,
  );
  const worker = s.worker({ transports: { postmark: postmarkTransport, sendgrid: sendgridTransport } });
  return { s, postmark, sendgrid, worker };
}

describeDialects('failover between HTTP providers on %s', (dialect, skip) => {
  const closer = closerPerTest();

  it.skipIf(skip)(
    'Postmark answering 503 fails over to SendGrid and comes back after the half-open probe; no message accepted twice',
    async () => {
      const { s, postmark, sendgrid, worker } = await postmarkThenSendgrid(dialect, closer);

      // Postmark is down: five sends answer 503, deferred, and the breaker opens.
      for (let i = 0; i < 5; i += 1) postmark.script({ path: '/email', status: 503, body: 'Service Unavailable' });
      const first = await insertQueued(s.store, 5, s.clock.now(), 'primary');
      expect(await worker.runOnce()).toBe(5);
      const opened = await s.admin('/organizations/acme/services/primary');
      expect(opened.breaker).toMatchObject({ state: 'open', consecutive_failures: 5 });
      expect(String((opened.breaker as { last_error?: string }).last_error)).toMatch(/postmark 503/);

      // The retries find it open: all through SendGrid, Postmark hears nothing.
      const postmarkRequests = postmark.requests.length;
      s.clock.advance(10_000);
      expect(await worker.runOnce()).toBe(5);
      expect(postmark.requests.length).toBe(postmarkRequests);
      expect(sendgrid.sent).toHaveLength(5);
      for (const id of first) expect(await viaOf(s, id)).toMatchObject({ status: 'sent', sent_via: 'backup' });

      // 30 s after it opened: half-open, Postmark is back. A message can fail over, so it is not the
      // probe: the synthetic probe (the service test's GET /server) runs in the background and
      // closes the breaker; messages admitted while it is in flight fail over, any admitted after
      // it closed go through Postmark (the worker sends three at once: which depends on timing).
      s.clock.advance(20_000);
      const second = await insertQueued(s.store, 3, s.clock.now(), 'primary');
      expect(await worker.runOnce()).toBe(3);
      await waitFor(
        async () => ((await s.admin('/organizations/acme/services/primary')).breaker as { state: string }).state === 'closed',
        10_000,
        'the synthetic probe closing the breaker',
      );
      expect(postmark.requests.filter((r) => r.method === 'GET' && r.path === '/server')).toHaveLength(1);
      const viaPostmark = postmark.sent.length;
      expect(viaPostmark + sendgrid.sent.length).toBe(5 + 3);
      expect((await s.admin('/organizations/acme/services/primary')).breaker).toEqual({
        state: 'closed',
        consecutive_failures: 0,
      });

      // Closed again: messages go through Postmark.
      const third = await insertQueued(s.store, 2, s.clock.now(), 'primary');
      expect(await worker.runOnce()).toBe(2);
      for (const id of third) expect(await viaOf(s, id)).toMatchObject({ status: 'sent', sent_via: 'primary' });
      expect(postmark.sent).toHaveLength(viaPostmark + 2);

      const counts = deliveries(postmark, sendgrid);
      expect([...counts.keys()].sort()).toEqual([...first, ...second, ...third].sort());
      expect([...counts.values()].every((n) => n === 1)).toBe(true);
    },
  );

  it.skipIf(skip)(
    'a lone message never goes to Postmark while it answers 503: its GET /server is the probe (503 reopens, 200 closes)',
    async () => {
      const { s, postmark, worker } = await postmarkThenSendgrid(dialect, closer);
      const breaker = async () =>
        (await s.admin('/organizations/acme/services/primary')).breaker as { state: string; last_error?: string };
      // Earlier traffic opened the breaker; Postmark still answers 503 to everything.
      for (let i = 0; i < 5; i++) await s.breakers.failed('acme/primary', { kind: 'pass' }, 'postmark 503 (earlier traffic)');
      postmark.script({ path: '/server', status: 503, body: 'Service Unavailable' });

      s.clock.advance(30_000);
      const [lone] = await insertQueued(s.store, 1, s.clock.now(), 'primary');
      expect(await worker.runOnce()).toBe(1);
      expect(await viaOf(s, lone!)).toMatchObject({ status: 'sent', sent_via: 'backup' });
      await waitFor(async () => (await breaker()).state === 'open', 10_000, 'the 503 to GET /server reopening the breaker');
      expect((await breaker()).last_error).toMatch(/^synthetic probe: .*503/);

      // Postmark is back: the next half-open check passes and mail goes through it again.
      s.clock.advance(30_000);
      const [during] = await insertQueued(s.store, 1, s.clock.now(), 'primary');
      expect(await worker.runOnce()).toBe(1);
      await waitFor(async () => (await breaker()).state === 'closed', 10_000, 'the 200 to GET /server closing the breaker');
      const [after] = await insertQueued(s.store, 1, s.clock.now(), 'primary');
      expect(await worker.runOnce()).toBe(1);
      expect(await viaOf(s, during!)).toMatchObject({ status: 'sent', sent_via: 'backup' });
      expect(await viaOf(s, after!)).toMatchObject({ status: 'sent', sent_via: 'primary' });
      expect(postmark.requests.filter((r) => r.path === '/email')).toHaveLength(1);
      expect(postmark.requests.filter((r) => r.path === '/server')).toHaveLength(2);
    },
  );
});
