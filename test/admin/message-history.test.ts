import { expect, it } from 'vitest';
import { freshAppEach, type TestApp } from '../support/app.js';
import { deleteContent } from '../support/db.js';
import { bearer, expectInvalidField, expectError } from '../support/http.js';
import { PRIVATE_KEY, seedOrg } from '../support/seed.js';
import { CONTACT_PARAMS, sendOk } from '../support/send.js';
import { admin } from '../support/admin.js';
import { describeDialects } from '../support/dialects.js';

/**
 * The admin API's message list and detail (the operator UI's Messages page): the list answers
 * exactly as GET /v1/history does for the same query, the detail as GET /v1/messages/{id} does
 * for a private key, plus `content`.
 */

interface Page {
  items: Array<{ message_id: string; status: string; to: string[] }>;
  next_cursor: string | null;
}

const OTHER_KEY = 'sk_other_private_1';

async function seed(t: TestApp): Promise<string[]> {
  await seedOrg(t.store, { credits: 1000 });
  await seedOrg(t.store, { id: 'other', keys: [{ type: 'private', key: OTHER_KEY }] });
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    t.clock.advance(1000);
    ids.push(
      (await sendOk(t, { template_id: 'contact', template_params: { ...CONTACT_PARAMS, name: `N${i}` } }, bearer())).message_id,
    );
  }
  await sendOk(t, { template_id: 'contact', template_params: CONTACT_PARAMS }, bearer(OTHER_KEY));
  return ids;
}

const v1 = (t: TestApp, path: string, key = PRIVATE_KEY) => t.app.inject({ method: 'GET', url: path, headers: bearer(key) });

describeDialects('admin message history on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  it.skipIf(skip)('lists the same pages as GET /v1/history, cursor included', async () => {
    const ids = await seed(t);
    for (const query of [
      'limit=2',
      'status=queued&limit=3',
      'q=OWNER@acme.test',
      `from=${new Date(t.clock.now() - 2500).toISOString()}`,
    ]) {
      const mine = await admin(t, 'GET', `/organizations/acme/messages?${query}`);
      expect(mine.statusCode, mine.body).toBe(200);
      expect(mine.json()).toEqual((await v1(t, `/v1/history?${query}`)).json());
    }
    const first = (await admin(t, 'GET', '/organizations/acme/messages?limit=3')).json<Page>();
    expect(first.items.map((i) => i.message_id)).toEqual(ids.slice(2).reverse());
    expect(first.items[0]?.to).toEqual(['owner@acme.test']);
    const cursor = first.next_cursor ?? '';
    const second = (await admin(t, 'GET', `/organizations/acme/messages?limit=3&cursor=${cursor}`)).json<Page>();
    expect(second.items.map((i) => i.message_id)).toEqual(ids.slice(0, 2).reverse());
    expect(second.next_cursor).toBeNull();
    const other = (await admin(t, 'GET', '/organizations/other/messages')).json<Page>();
    expect(other.items).toHaveLength(1);
  });

  it.skipIf(skip)("answers bad queries with /v1/history's 400s, and an unknown organization with 404", async () => {
    await seed(t);
    for (const [query, field] of [
      ['status=nope', 'status'],
      ['from=yesterday', 'from'],
      ['cursor=abc', 'cursor'],
      ['limit=0', 'limit'],
      ['q=a%00b', 'q'],
    ] as const) {
      const res = await admin(t, 'GET', `/organizations/acme/messages?${query}`);
      expectInvalidField(res, field);
      expect(res.json()).toEqual((await v1(t, `/v1/history?${query}`)).json());
    }
    expectError(await admin(t, 'GET', '/organizations/nobody/messages'), 404, 'not_found');
    expectError(await admin(t, 'GET', '/organizations/acme/messages', undefined, null), 401, 'unauthorized');
  });

  it.skipIf(skip)('detail: the private-key body of GET /v1/messages/{id}, plus the rendered content', async () => {
    const [id = ''] = await seed(t);
    const res = await admin(t, 'GET', `/organizations/acme/messages/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    const { content, ...rest } = res.json<{ content: Record<string, unknown> | null }>();
    expect(rest).toEqual((await v1(t, `/v1/messages/${id}`)).json());
    expect(rest).toMatchObject({
      message_id: id,
      status: 'queued',
      recipients: [{ address: 'owner@acme.test', kind: 'to', state: 'pending' }],
    });
    expect(rest).toHaveProperty('events', [expect.objectContaining({ type: 'queued' })]);
    expect(content).toEqual({
      subject: 'Message from N0',
      html: '<p>Hello there</p>',
      text: 'Hello there',
      from: 'noreply@acme.test',
      reply_to: ['ann@example.com'],
      to: ['owner@acme.test'],
      cc: [],
      bcc: [],
    });

    await deleteContent(t.store, id);
    expect((await admin(t, 'GET', `/organizations/acme/messages/${id}`)).json()).toMatchObject({ message_id: id, content: null });
  });

  it.skipIf(skip)("another organization's message, an unknown id and one past retention are message_not_found", async () => {
    const [id = ''] = await seed(t);
    expectError(await admin(t, 'GET', `/organizations/other/messages/${id}`), 404, 'message_not_found');
    expectError(await admin(t, 'GET', '/organizations/acme/messages/msg_nope'), 404, 'message_not_found');
    expectError(await admin(t, 'GET', `/organizations/nobody/messages/${id}`), 404, 'not_found');
    t.clock.advance((t.config.retentionDays + 1) * 86_400_000);
    expectError(await admin(t, 'GET', `/organizations/acme/messages/${id}`), 404, 'message_not_found');
  });
});
