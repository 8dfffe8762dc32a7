import { expect, it } from 'vitest';
import { ADMIN_TOKEN, type TestApp } from '../support/app.js';
import { expectError, expectInvalidField } from '../support/http.js';
import { creditsOf, totalMessageCount } from '../support/stored.js';
import { deliveryHarness, PARAMS, privateHeaders, seedSmtpOrg, smtpService, view } from '../support/delivery.js';
import { describeDialects } from '../support/dialects.js';

const URL = '/admin/v1/organizations/acme/templates/contact/send-test';

const sendTest = (t: TestApp, body: Record<string, unknown>, url = URL) =>
  t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: body });

interface HistoryItem {
  message_id: string;
  template_id: string;
  status: string;
}
interface Recipient {
  address: string;
  kind: string;
  state: string;
}

describeDialects('template send test on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)('202; a real message to `to` only, in the history, delivered to the SMTP sink by the worker', async () => {
    const t = await h.app();
    const sink = await h.sink(t);
    // The delivery template has a named To and a Cc: neither may receive a test.
    await seedSmtpOrg(t.store, smtpService(sink.port));
    const credits = await creditsOf(t);

    const res = await sendTest(t, { to: 'tester@example.net', template_params: PARAMS });
    expect(res.statusCode, res.body).toBe(202);
    const body = res.json<{ message_id: string; status: string }>();
    expect(body).toEqual({ message_id: expect.any(String), status: 'queued' });
    expect(await creditsOf(t)).toBe(credits - 1);

    const history = await t.app.inject({ method: 'GET', url: '/v1/history', headers: privateHeaders });
    expect(history.json<{ items: HistoryItem[] }>().items).toEqual([
      expect.objectContaining({ message_id: body.message_id, template_id: 'contact' }),
    ]);
    const message = await t.app.inject({ method: 'GET', url: `/v1/messages/${body.message_id}`, headers: privateHeaders });
    expect(message.json<{ recipients: Recipient[] }>().recipients).toEqual([
      { address: 'tester@example.net', kind: 'to', state: 'pending' },
    ]);

    const { worker } = h.worker(t);
    expect(await worker.runOnce()).toBe(1);
    expect(sink.received).toHaveLength(1);
    expect(sink.received[0]?.rcptTo).toEqual(['tester@example.net']);
    const mail = await sink.parse(0);
    expect(mail.subject).toBe('Message from Ada Lovelace');
    expect(mail.text?.trim()).toBe('Hello from the engine');
    expect(mail.cc).toBeUndefined();
    expect(mail.headers.get('to')).toMatchObject({ text: 'tester@example.net' });
    const sent = await view(t, body.message_id);
    expect(sent.status).toBe('sent');
    expect(sent.events.map((e) => e.type)).toEqual(['queued', 'sending', 'sent']);
  });

  it.skipIf(skip)(
    '422 on bad parameters as a send; bad `to`, unknown template or organization refused; nothing stored',
    async () => {
      const { t } = await h.smtpApp();
      const credits = await creditsOf(t);

      const bad = expectError(
        await sendTest(t, { to: 'tester@example.net', template_params: { name: 'Ada' } }),
        422,
        'invalid_template_params',
      );
      expect(bad.details?.issues?.map((i) => [i.param, i.code])).toEqual([
        ['email', 'required'],
        ['message', 'required'],
      ]);
      expectInvalidField(await sendTest(t, { to: 'not an address', template_params: PARAMS }), 'to');
      expectInvalidField(await sendTest(t, { to: '{{email}}@example.net', template_params: PARAMS }), 'to');
      expectError(await sendTest(t, { template_params: PARAMS }), 400, 'invalid_body');
      expectError(
        await sendTest(t, { to: 'tester@example.net', template_params: PARAMS }, URL.replace('contact', 'nope')),
        404,
        'template_not_found',
      );
      expectError(
        await sendTest(t, { to: 'tester@example.net', template_params: PARAMS }, URL.replace('acme', 'nope')),
        404,
        'not_found',
      );
      expectError(
        await sendTest(t, { to: 'tester@example.net', template_params: PARAMS, service_id: 'ghost' }),
        404,
        'service_not_found',
      );

      // The suppression list applies to a test as to any send.
      await t.store.suppressions.add('acme', 'gone@example.net', 'hard_bounce', t.clock.now());
      expectError(await sendTest(t, { to: 'gone@example.net', template_params: PARAMS }), 451, 'recipient_suppressed');

      expect(await totalMessageCount(t)).toBe(0);
      expect(await creditsOf(t)).toBe(credits);
    },
  );

  it.skipIf(skip)(
    'later sends of the template still go to its own recipients (the test is not cached as the template)',
    async () => {
      const { t } = await h.smtpApp();
      expect((await sendTest(t, { to: 'tester@example.net', template_params: PARAMS })).statusCode).toBe(202);
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/send',
        headers: privateHeaders,
        payload: { template_id: 'contact', template_params: PARAMS },
      });
      expect(res.statusCode, res.body).toBe(202);
      const message = await t.app.inject({
        method: 'GET',
        url: `/v1/messages/${res.json<{ message_id: string }>().message_id}`,
        headers: privateHeaders,
      });
      expect(message.json<{ recipients: Recipient[] }>().recipients.map((r) => [r.kind, r.address])).toEqual([
        ['to', 'owner@acme.test'],
        ['cc', 'audit@acme.test'],
      ]);
    },
  );

  it.skipIf(skip)('is in the OpenAPI document', async () => {
    const t = await h.app();
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{
      paths: Record<string, Record<string, { tags: string[] }>>;
    }>();
    expect(doc.paths['/admin/v1/organizations/{org}/templates/{id}/send-test']?.post?.tags).toEqual(['admin']);
  });
});
