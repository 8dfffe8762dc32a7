import { expect, it } from 'vitest';
import { freshAppAll, type TestApp } from '../support/app.js';
import { PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { type Accepted, bearer, expectError, expectInvalidField } from '../support/http.js';
import { CONTACT_PARAMS, sendOk } from '../support/send.js';
import { ROOMY } from '../support/orgs.js';
import { describeDialects } from '../support/dialects.js';

/**
 * GET /v1/messages/{id}: a private key reads any message of its organization; a public key
 * needs the message's status token (X-Mail-Status-Token, or the deprecated ?token=); anything
 * else looks like a missing message (404 message_not_found). Messages past the retention
 * (MAILROOM_RETENTION_DAYS, 30 by default) are gone.
 */

interface MessageBody {
  message_id: string;
  status: string;
  created_at: string;
  sent_at: string | null;
  template_id: string;
  service_id: string;
  events: Array<{ type: string; at: string }>;
}

const DAY = 86_400_000;
const OTHER_SK = 'sk_other_private_1';
const OTHER_PK = 'pk_other_public_1';
const security = { allowed_origins: ['example.com', '*.example.com'], allow_mobile_apps: true, ip_limit: ROOMY.ip_limit };

async function seed(t: TestApp): Promise<void> {
  await seedOrg(t.store, { plan: ROOMY.plan, security });
  await seedOrg(t.store, {
    id: 'other',
    plan: ROOMY.plan,
    security,
    keys: [
      { type: 'public', key: OTHER_PK },
      { type: 'private', key: OTHER_SK },
    ],
  });
}

const contact = { template_id: 'contact', template_params: CONTACT_PARAMS };
const pub = (key = PUBLIC_KEY) => ({ 'x-mail-public-key': key });

describeDialects('GET /v1/messages/{id} on %s', (dialect, skip) => {
  let t: TestApp;
  let viaPrivate: Accepted;
  let viaPublic: Accepted;
  let acceptedAt: number;

  freshAppAll(dialect, skip, async (app) => {
    t = app;
    await seed(t);
    acceptedAt = t.clock.now();
    viaPrivate = await sendOk(t, contact, bearer(PRIVATE_KEY));
    viaPublic = await sendOk(t, contact, pub());
  });

  const get = (id: string, headers: Record<string, string> = {}, query = '') =>
    t.app.inject({ method: 'GET', url: `/v1/messages/${encodeURIComponent(id)}${query}`, headers });

  it.skipIf(skip)('a private key reads a message of its organization: the Message resource with its first event', async () => {
    const res = await get(viaPrivate.message_id, bearer(PRIVATE_KEY));
    expect(res.statusCode, res.body).toBe(200);
    const m = res.json<MessageBody>();
    expect(m).toEqual({
      message_id: viaPrivate.message_id,
      status: 'queued',
      created_at: expect.any(String),
      sent_at: null,
      template_id: 'contact',
      service_id: 'outbox',
      mode: 'live',
      events: [{ type: 'queued', at: expect.any(String) }],
      // Issue 11 §3: each recipient's own state, for private-key reads.
      recipients: [{ address: 'owner@acme.test', kind: 'to', state: 'pending' }],
    });
    expect(Date.parse(m.created_at)).toBe(acceptedAt);
    expect(Date.parse(m.events[0]?.at ?? '')).toBe(acceptedAt);
    expect(m.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
  });

  it.skipIf(skip)('a private key reads messages sent with a public key too, without a token', async () => {
    const res = await get(viaPublic.message_id, bearer(PRIVATE_KEY));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<MessageBody>().message_id).toBe(viaPublic.message_id);
  });

  it.skipIf(skip)("another organization's private key gets 404 message_not_found", async () => {
    expectError(await get(viaPrivate.message_id, bearer(OTHER_SK)), 404, 'message_not_found');
  });

  it.skipIf(skip)('a public key with the status token in X-Mail-Status-Token gets 200', async () => {
    const res = await get(viaPublic.message_id, { ...pub(), 'x-mail-status-token': viaPublic.status_token });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<MessageBody>()).toMatchObject({ message_id: viaPublic.message_id, status: 'queued', template_id: 'contact' });
    // The token of a message sent with a private key works the same way.
    const other = await get(viaPrivate.message_id, { ...pub(), 'x-mail-status-token': viaPrivate.status_token });
    expect(other.statusCode, other.body).toBe(200);
  });

  it.skipIf(skip)('the deprecated ?token= still works', async () => {
    const res = await get(viaPublic.message_id, pub(), `?token=${encodeURIComponent(viaPublic.status_token)}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<MessageBody>().message_id).toBe(viaPublic.message_id);
  });

  it.skipIf(skip)('a wrong token gives 404 message_not_found', async () => {
    expectError(await get(viaPublic.message_id, { ...pub(), 'x-mail-status-token': 'st_wrong_token' }), 404, 'message_not_found');
    expectError(await get(viaPublic.message_id, pub(), '?token=st_wrong_token'), 404, 'message_not_found');
    // A real token, of another message.
    expectError(
      await get(viaPublic.message_id, { ...pub(), 'x-mail-status-token': viaPrivate.status_token }),
      404,
      'message_not_found',
    );
    // The right token with one character changed.
    const last = viaPublic.status_token.slice(-1) === 'A' ? 'B' : 'A';
    expectError(
      await get(viaPublic.message_id, { ...pub(), 'x-mail-status-token': viaPublic.status_token.slice(0, -1) + last }),
      404,
      'message_not_found',
    );
  });

  it.skipIf(skip)('an empty X-Mail-Status-Token counts as absent: the ?token= beside it still works', async () => {
    const query = `?token=${encodeURIComponent(viaPublic.status_token)}`;
    const res = await get(viaPublic.message_id, { ...pub(), 'x-mail-status-token': '' }, query);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<MessageBody>().message_id).toBe(viaPublic.message_id);
    // A non-empty header still wins over the query, even when only the query is right.
    expectError(
      await get(viaPublic.message_id, { ...pub(), 'x-mail-status-token': 'st_wrong_token' }, query),
      404,
      'message_not_found',
    );
    // Both empty: no token at all.
    expectError(await get(viaPublic.message_id, { ...pub(), 'x-mail-status-token': '' }, '?token='), 404, 'message_not_found');
  });

  it.skipIf(skip)('a public key without a token gets 404 message_not_found', async () => {
    expectError(await get(viaPublic.message_id, pub()), 404, 'message_not_found');
    expectError(await get(viaPublic.message_id, { ...pub(), 'x-mail-status-token': '' }), 404, 'message_not_found');
  });

  it.skipIf(skip)("a public key of another organization gets 404 even with the message's token", async () => {
    expectError(
      await get(viaPublic.message_id, { ...pub(OTHER_PK), 'x-mail-status-token': viaPublic.status_token }),
      404,
      'message_not_found',
    );
  });

  it.skipIf(skip)('a token over 200 characters gives 400 invalid_body', async () => {
    const long = 's'.repeat(201);
    expectError(await get(viaPublic.message_id, { ...pub(), 'x-mail-status-token': long }), 400, 'invalid_body');
    expectInvalidField(await get(viaPublic.message_id, pub(), `?token=${long}`), 'token');
    // 200 is still a (wrong) token, not a malformed request.
    expectError(await get(viaPublic.message_id, { ...pub(), 'x-mail-status-token': 's'.repeat(200) }), 404, 'message_not_found');
  });

  it.skipIf(skip)('an unknown id gives 404 message_not_found', async () => {
    expectError(await get('msg_does_not_exist', bearer(PRIVATE_KEY)), 404, 'message_not_found');
    expectError(
      await get('msg_does_not_exist', { ...pub(), 'x-mail-status-token': viaPublic.status_token }),
      404,
      'message_not_found',
    );
  });

  it.skipIf(skip)(
    'an id no message can have (NUL, control or other characters) gives 404 message_not_found like any unknown id',
    async () => {
      // PostgreSQL refuses NUL in text parameters: this was a 500 there.
      const impossible = [
        'a\u0000b',
        '\u0000',
        `${viaPrivate.message_id}\u0000`,
        'msg\u0001',
        'msg\u007f',
        'msg x',
        'msg_\u00e9',
        'msg.1',
        'a/b',
        '%',
      ];
      for (const id of impossible) {
        expectError(await get(id, bearer(PRIVATE_KEY)), 404, 'message_not_found');
        expectError(await get(id, { ...pub(), 'x-mail-status-token': viaPublic.status_token }), 404, 'message_not_found');
      }
      // The raw path too, as a client would send it.
      const res = await t.app.inject({ method: 'GET', url: '/v1/messages/a%00b', headers: bearer(PRIVATE_KEY) });
      expectError(res, 404, 'message_not_found');
      // Authentication still comes first.
      expectError(await get('a\u0000b'), 401, 'unauthorized');
      expectError(await get('a\u0000b', bearer('sk_unknown_key_999')), 401, 'invalid_private_key');
    },
  );

  it.skipIf(skip)('an id over 64 characters gives 400 invalid_body', async () => {
    expectError(await get('m'.repeat(65), bearer(PRIVATE_KEY)), 400, 'invalid_body');
  });

  it.skipIf(skip)('without a key: 401 unauthorized; an unknown key: 401 invalid_*_key', async () => {
    expectError(await get(viaPrivate.message_id), 401, 'unauthorized');
    expectError(await get(viaPrivate.message_id, { 'x-mail-status-token': viaPrivate.status_token }), 401, 'unauthorized');
    expectError(await get(viaPrivate.message_id, bearer('sk_unknown_key_999')), 401, 'invalid_private_key');
    expectError(await get(viaPrivate.message_id, pub('pk_unknown_key_999')), 401, 'invalid_public_key');
  });
});

describeDialects('GET /v1/messages/{id} and the retention on %s', (dialect, skip) => {
  let t: TestApp;
  freshAppAll(dialect, skip, async (app) => {
    t = app;
    await seed(t);
  });

  const get = (id: string, headers: Record<string, string>) =>
    t.app.inject({ method: 'GET', url: `/v1/messages/${id}`, headers });

  it.skipIf(skip)('a message older than the retention (30 days by default) is 404 message_not_found', async () => {
    const old = await sendOk(t, contact, pub());
    t.clock.advance(29 * DAY);
    const recent = await sendOk(t, contact, pub());
    // 29 days: still there.
    expect((await get(old.message_id, bearer(PRIVATE_KEY))).statusCode).toBe(200);
    t.clock.advance(2 * DAY);
    // 31 days after the first send, 2 after the second.
    expectError(await get(old.message_id, bearer(PRIVATE_KEY)), 404, 'message_not_found');
    expectError(await get(old.message_id, { ...pub(), 'x-mail-status-token': old.status_token }), 404, 'message_not_found');
    expect((await get(recent.message_id, bearer(PRIVATE_KEY))).statusCode).toBe(200);
    expect((await get(recent.message_id, { ...pub(), 'x-mail-status-token': recent.status_token })).statusCode).toBe(200);
  });
});

describeDialects('GET /v1/messages/{id} with MAILROOM_RETENTION_DAYS=7 on %s', (dialect, skip) => {
  let t: TestApp;
  freshAppAll(
    dialect,
    skip,
    async (app) => {
      t = app;
      await seed(t);
    },
    { MAILROOM_RETENTION_DAYS: '7' },
  );

  it.skipIf(skip)('the retention follows the setting', async () => {
    const m = await sendOk(t, contact, bearer(PRIVATE_KEY));
    const get = () => t.app.inject({ method: 'GET', url: `/v1/messages/${m.message_id}`, headers: bearer(PRIVATE_KEY) });
    t.clock.advance(6 * DAY);
    expect((await get()).statusCode).toBe(200);
    t.clock.advance(2 * DAY);
    expectError(await get(), 404, 'message_not_found');
  });
});
