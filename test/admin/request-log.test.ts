import { expect, it } from 'vitest';
import { housekeeping } from '../../src/delivery/housekeeping.js';
import { requestRecorderOf } from '../../src/http/refused-requests.js';
import { PER_ORG_PER_MINUTE } from '../../src/http/request-recorder.js';
import { admin } from '../support/admin.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { describeDialects } from '../support/dialects.js';
import { expectError } from '../support/http.js';
import { PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { CONTACT_PARAMS } from '../support/send.js';

/**
 * Issue 29, the request log: refused public API requests (4xx) are recorded per organization
 * (key id, never the key; route pattern; status; code; message; non-secret fields), listed
 * newest first by GET /admin/v1/organizations/{org}/request-log with filters and a cursor, capped
 * per organization a minute, and purged by retention.
 */

interface Entry {
  id: string;
  created_at: string;
  key_id: string | null;
  method: string;
  route: string;
  status: number;
  code: string;
  message: string;
  fields: Record<string, unknown>;
  ip: string | null;
}
interface Page {
  items: Entry[];
  next_cursor: string | null;
}

const priv = { authorization: `Bearer ${PRIVATE_KEY}` };

describeDialects('request log on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, async (app) => {
    t = app;
    await seedOrg(t.store, { plan: 'free' });
  });

  const flush = async () => {
    // Lookups of a key carried by a request refused before its route (a schema failure) finish first.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await requestRecorderOf(t.app)?.flush();
  };
  const log = async (query = ''): Promise<Page> => {
    const res = await admin(t, 'GET', `/organizations/acme/request-log${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Page>();
  };
  const sendAs = (payload: Record<string, unknown>, headers: Record<string, string> = priv, url = '/v1/send') =>
    t.app.inject({ method: 'POST', url, payload, headers: { 'user-agent': 'test-agent/1.0', ...headers } });
  const keyIdOf = async (value: string) => (await t.store.keys.findByValue(value))?.id;

  it.skipIf(skip)('a 422, a 451 and a 429 are found with their fields; no key or parameter value is kept', async () => {
    const bad = await sendAs({
      template_id: 'contact',
      template_params: { name: 'Ada', email: 'not-an-address', message: 'my secret order 4711' },
      turnstile_token: 'captcha-token-value-0123456789',
    });
    expectError(bad, 422, 'invalid_template_params');
    // Free: 2 requests a second per key; the third is refused.
    t.clock.advance(1000);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await sendAs({ template_id: 'contact', template_params: CONTACT_PARAMS })).statusCode);
    expect(statuses).toEqual([202, 202, 429]);
    t.clock.advance(1000);
    await t.store.suppressions.add('acme', 'owner@acme.test', 'manual', t.clock.now());
    expectError(await sendAs({ template_id: 'contact', template_params: CONTACT_PARAMS }), 451, 'recipient_suppressed');
    await flush();

    const page = await log();
    const keyId = await keyIdOf(PRIVATE_KEY);
    const byCode = (code: string) => page.items.find((i) => i.code === code);
    const invalid = byCode('invalid_template_params');
    expect(invalid).toMatchObject({
      key_id: keyId,
      method: 'POST',
      route: '/v1/send',
      status: 422,
      fields: {
        template_id: 'contact',
        template_params: { name: 'string(3)', email: 'string(14)', message: 'string(20)' },
        user_agent: 'test-agent/1.0',
      },
    });
    expect((invalid?.fields.details as { issues?: unknown[] } | undefined)?.issues?.length).toBeGreaterThan(0);
    expect(byCode('recipient_suppressed')).toMatchObject({
      status: 451,
      fields: { details: { recipients: ['owner@acme.test'] } },
    });
    expect(byCode('rate_limited')).toMatchObject({ status: 429, key_id: keyId });
    expect(page.items).toHaveLength(3);
    const text = JSON.stringify(page);
    for (const secret of [PRIVATE_KEY, 'captcha-token-value', 'my secret order', 'not-an-address'])
      expect(text, secret).not.toContain(secret);
    // Newest first.
    expect(page.items.map((i) => i.created_at)).toEqual([...page.items.map((i) => i.created_at)].sort().reverse());
  });

  it.skipIf(skip)(
    'the legacy alias, a revoked key and a body refused before its route are recorded; admin and unknown keys not',
    async () => {
      const legacy = await t.app.inject({
        method: 'POST',
        url: '/api/v1.0/email/send',
        payload: { service_id: 'outbox', template_id: 'missing', user_id: PUBLIC_KEY, template_params: { a: 1 } },
        headers: { origin: 'https://example.com' },
      });
      const legacyCode = legacy.json<{ error: { code: string } }>().error.code;
      expect(legacy.statusCode, legacy.body).toBeGreaterThanOrEqual(400);
      t.clock.advance(1000);
      // The schema refuses it before the route looks the key up: the key's organization is found after.
      expectError(await sendAs({ template_id: 42, accessToken: PRIVATE_KEY }, {}), 400, 'invalid_body');
      expectError(
        await sendAs({ template_id: 'contact' }, { authorization: 'Bearer sk_nobody_0123456789abcdef' }),
        401,
        'invalid_private_key',
      );
      expectError(await admin(t, 'GET', '/organizations/nobody/request-log'), 404, 'not_found');
      await flush();
      const page = await log();
      expect(page.items.map((i) => [i.route, i.status, i.code])).toEqual([
        ['/v1/send', 400, 'invalid_body'],
        ['/api/v1.0/email/send', legacy.statusCode, legacyCode],
      ]);
      const [schema, alias] = page.items;
      expect(alias?.key_id).toBe(await keyIdOf(PUBLIC_KEY));
      expect(alias?.fields).toMatchObject({
        service_id: 'outbox',
        template_params: { a: 'number' },
        origin: 'https://example.com',
      });
      expect(schema?.key_id).toBe(await keyIdOf(PRIVATE_KEY));
      expect(JSON.stringify(page)).not.toContain(PUBLIC_KEY);
    },
  );

  it.skipIf(skip)('filters by status, code, key, route and time, and pages with the cursor', async () => {
    for (let i = 0; i < 5; i++) {
      t.clock.advance(1000);
      await sendAs({ template_id: `missing${i}`, template_params: {} });
    }
    t.clock.advance(1000);
    await sendAs({ template_id: 'contact', template_params: { name: 1 } });
    await flush();
    expect((await log('?status=422')).items.map((i) => i.code)).toEqual(['invalid_template_params']);
    expect((await log('?code=template_not_found')).items).toHaveLength(5);
    expect((await log(`?key_id=${await keyIdOf(PRIVATE_KEY)}`)).items).toHaveLength(6);
    expect((await log('?key_id=key_other')).items).toHaveLength(0);
    expect((await log('?route=/v1/send')).items).toHaveLength(6);
    expect((await log('?route=/v1/send-form')).items).toHaveLength(0);
    const all = (await log()).items;
    const third = all[2]?.created_at ?? '';
    expect((await log(`?since=${third}`)).items).toHaveLength(3);
    expect((await log(`?until=${third}`)).items).toHaveLength(3);
    const first = await log('?limit=4');
    expect(first.items).toHaveLength(4);
    const second = await log(`?limit=4&cursor=${first.next_cursor ?? ''}`);
    expect(second.next_cursor).toBeNull();
    expect([...first.items, ...second.items].map((i) => i.id)).toEqual(all.map((i) => i.id));
    expectError(await admin(t, 'GET', '/organizations/acme/request-log?status=200'), 400, 'invalid_body');
    expectError(await admin(t, 'GET', '/organizations/acme/request-log?since=yesterday'), 400, 'invalid_body');
    expectError(await admin(t, 'GET', '/organizations/acme/request-log?cursor=xyz'), 400, 'invalid_body');
  });

  it.skipIf(skip)('keeps 60 rows per organization a minute and a summary of the rest', async () => {
    t.clock.set(Math.ceil(t.clock.now() / 60_000) * 60_000 + 1000);
    for (let i = 0; i < PER_ORG_PER_MINUTE + 15; i++) {
      // Past the per-second limits: every one is a 404, none a 429.
      t.clock.advance(500);
      await sendAs({ template_id: 'missing', template_params: {} });
    }
    await flush();
    expect((await log('?limit=100')).items).toHaveLength(PER_ORG_PER_MINUTE);
    // The next minute's first refusal closes the last: its summary row is written with it.
    t.clock.advance(60_000);
    await sendAs({ template_id: 'missing', template_params: {} });
    await flush();
    const items = (await log('?limit=100')).items;
    expect(items).toHaveLength(PER_ORG_PER_MINUTE + 2);
    const summary = items.find((i) => i.code === 'request_log_capped');
    expect(summary).toMatchObject({ status: 404, route: '/v1/send', fields: { not_logged: 15, statuses: { '404': 15 } } });
    expect((await log('?status=404&limit=100')).items).toHaveLength(PER_ORG_PER_MINUTE + 2);
  });

  it.skipIf(skip)('retention purges rows older than MAILROOM_REQUEST_LOG_DAYS, in batches', async () => {
    const now = t.clock.now();
    const old = Array.from({ length: 1200 }, (_, i) => ({
      id: `rql_old${String(i).padStart(5, '0')}`,
      org_id: 'acme',
      created_at: now - 4 * 86_400_000 + i,
      key_id: null,
      method: 'POST',
      route: '/v1/send',
      status: 404,
      code: 'template_not_found',
      message: 'old',
      fields: '{}',
      ip: null,
    }));
    for (let i = 0; i < old.length; i += 200) await t.store.requestLog.insertMany(old.slice(i, i + 200));
    await sendAs({ template_id: 'missing', template_params: {} });
    await flush();
    // Past retention: no longer listed even before the purge.
    expect((await log('?limit=100')).items.map((i) => i.message)).not.toContain('old');
    await housekeeping({ store: t.store, requestLogDays: t.config.requestLogDays }, now);
    const left = await t.store.requestLog.list('acme', {}, 2000);
    expect(left.map((r) => r.code)).toEqual(['template_not_found']);
    expect(left[0]?.message).not.toBe('old');
  });
});

describeDialects('request log switched off on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(
    dialect,
    skip,
    async (app) => {
      t = app;
      await seedOrg(t.store);
    },
    { MAILROOM_REQUEST_LOG_DAYS: '0' },
  );

  it.skipIf(skip)('MAILROOM_REQUEST_LOG_DAYS=0 records nothing', async () => {
    expect(requestRecorderOf(t.app)).toBeUndefined();
    const res = await t.app.inject({ method: 'POST', url: '/v1/send', payload: { template_id: 'missing' }, headers: priv });
    expectError(res, 404, 'template_not_found');
    expect(await t.store.requestLog.list('acme', {}, 10)).toEqual([]);
  });
});
