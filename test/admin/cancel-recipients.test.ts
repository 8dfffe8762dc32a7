import { expect, it } from 'vitest';
import { freshAppEach, type TestApp } from '../support/app.js';
import { bearer } from '../support/http.js';
import { PRIVATE_KEY, seedOrg } from '../support/seed.js';
import { sendBody, sendOk } from '../support/send.js';
import { admin } from '../support/admin.js';
import { describeDialects } from '../support/dialects.js';

interface Recipient {
  address: string;
  kind: string;
  state: string;
}

/**
 * Issue 25: a message an operator cancels was never sent to anyone, so its recipients read
 * `discarded` (they read `failed`) in GET /v1/messages/{id} and in the admin message detail.
 */
describeDialects('recipients of a cancelled message on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  const recipients = async (id: string): Promise<{ api: Recipient[]; admin: Recipient[] }> => {
    const api = await t.app.inject({ method: 'GET', url: `/v1/messages/${id}`, headers: bearer(PRIVATE_KEY) });
    expect(api.statusCode, api.body).toBe(200);
    const detail = await admin(t, 'GET', `/organizations/acme/messages/${id}`);
    expect(detail.statusCode, detail.body).toBe(200);
    return {
      api: api.json<{ recipients: Recipient[] }>().recipients,
      admin: detail.json<{ recipients: Recipient[] }>().recipients,
    };
  };

  it.skipIf(skip)('a held message cancelled by an operator: every recipient reads discarded', async () => {
    // No credits and the default `hold`: the send is accepted and held.
    await seedOrg(t.store, {
      credits: 0,
      templates: [
        {
          id: 'contact',
          subject: 'Hi',
          to: 'owner@acme.test',
          cc: 'copy@acme.test',
          from_email: 'noreply@acme.test',
          html: '<p>Hi</p>',
          text: 'Hi',
        },
      ],
    });
    const accepted = await sendOk(t, sendBody({ template_params: {} }), bearer(PRIVATE_KEY));
    expect(accepted.status).toBe('held');
    expect((await recipients(accepted.message_id)).api.map((r) => r.state)).toEqual(['pending', 'pending']);

    const res = await admin(t, 'POST', `/organizations/acme/messages/${accepted.message_id}/cancel`);
    expect(res.json(), res.body).toEqual({ message_id: accepted.message_id, status: 'discarded' });

    const after = await recipients(accepted.message_id);
    const expected = [
      { address: 'owner@acme.test', kind: 'to', state: 'discarded' },
      { address: 'copy@acme.test', kind: 'cc', state: 'discarded' },
    ];
    expect(after.api).toEqual(expected);
    expect(after.admin).toEqual(expected);
  });

  it.skipIf(skip)('a queued message cancelled before the worker took it reads discarded too', async () => {
    await seedOrg(t.store);
    const accepted = await sendOk(t, sendBody(), bearer(PRIVATE_KEY));
    expect(accepted.status).toBe('queued');
    await admin(t, 'POST', `/organizations/acme/messages/${accepted.message_id}/cancel`);
    const after = await recipients(accepted.message_id);
    expect(after.api.map((r) => r.state)).toEqual(['discarded']);
    expect(after.admin.map((r) => r.state)).toEqual(['discarded']);
  });
});
