import dns from 'node:dns/promises';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { isBlockedAddress } from '../../src/webhooks/url-guard.js';
import { sameSecret } from '../../src/admin/webhooks.js';
import { admin, createOrg } from '../support/admin.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { expectError, expectInvalidField } from '../support/http.js';
import { endpointRow, setEndpointFields } from '../support/webhooks/dispatch.js';
import { testSecret } from '../support/webhooks/receiver.js';
import { describeDialects } from '../support/dialects.js';

interface WebhookBody {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: string | null;
  secret_hint: string;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
  secret?: string;
}

const SECRET_FORM = /^whsec_[A-Za-z0-9+/]{43}=$/;
const HOOKS = '/organizations/acme/webhooks';

/** Whether this machine's own name resolves only to addresses production refuses (it usually does: /etc/hosts). */
async function hostnameIsPrivate(): Promise<boolean> {
  try {
    const found = await dns.lookup(os.hostname(), { all: true });
    return found.length > 0 && found.every((a) => isBlockedAddress(a.address));
  } catch {
    return false;
  }
}
const privateHostname = await hostnameIsPrivate();

describeDialects('admin webhook endpoints on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  it.skipIf(skip)('create shows the secret once; reads never do; list, get, PUT, PATCH, DELETE', async () => {
    await createOrg(t);
    const created = await admin(t, 'POST', HOOKS, {
      url: 'http://127.0.0.1:9/hook',
      events: ['message.delivered', 'message.bounced'],
      description: 'CRM',
    });
    expect(created.statusCode, created.body).toBe(201);
    const c = created.json<WebhookBody>();
    expect(c.id).toMatch(/^wh_[0-9a-f]{24}$/);
    expect(c.secret).toMatch(SECRET_FORM);
    expect(c).toMatchObject({
      url: 'http://127.0.0.1:9/hook',
      events: ['message.delivered', 'message.bounced'],
      enabled: true,
      description: 'CRM',
      disabled_reason: null,
      failing_since: null,
      previous_secret_expires_at: null,
      secret_hint: `…${(c.secret ?? '').slice(-4)}`,
      created_at: '2026-01-01T00:00:00.000Z',
    });
    expect((await endpointRow(t.store, c.id)).secret).toBe(c.secret);

    const got = await admin(t, 'GET', `${HOOKS}/${c.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json()).not.toHaveProperty('secret');
    expect(got.body).not.toContain(c.secret);
    const list = await admin(t, 'GET', HOOKS);
    expect(list.json<{ items: WebhookBody[] }>().items.map((w) => w.id)).toEqual([c.id]);
    expect(list.body).not.toContain(c.secret);

    // PUT takes what GET returns; events ["*"] is every event.
    t.clock.advance(1000);
    const shown = got.json<WebhookBody>();
    const put = await admin(t, 'PUT', `${HOOKS}/${c.id}`, { ...shown, events: ['*'], description: null });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json<WebhookBody>()).toMatchObject({ events: ['*'], description: null, updated_at: '2026-01-01T00:00:01.000Z' });
    expect(put.json()).not.toHaveProperty('secret');
    expect((await endpointRow(t.store, c.id)).events).toBe('*');

    const patched = await admin(t, 'PATCH', `${HOOKS}/${c.id}`, { events: ['message.sent'] });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json<WebhookBody>()).toMatchObject({ events: ['message.sent'], url: 'http://127.0.0.1:9/hook' });
    expect((await endpointRow(t.store, c.id)).events).toBe(',message.sent,');

    // PUT of a new id creates it (201, secret shown); a given secret is kept as given.
    const secret = testSecret(7);
    const made = await admin(t, 'PUT', `${HOOKS}/crm`, { url: 'http://localhost:9/x', events: ['*'], enabled: false, secret });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json<WebhookBody>()).toMatchObject({ id: 'crm', secret, enabled: false });
    // The stored secret again is accepted (a PUT of the creating body); any other is refused.
    const sameSecret = await admin(t, 'PUT', `${HOOKS}/crm`, {
      url: 'http://localhost:9/y',
      events: ['*'],
      enabled: false,
      secret,
    });
    expect(sameSecret.statusCode, sameSecret.body).toBe(200);
    expect(sameSecret.json<WebhookBody>().url).toBe('http://localhost:9/y');
    const changedSecret = await admin(t, 'PUT', `${HOOKS}/crm`, {
      url: 'http://localhost:9/x',
      events: ['*'],
      enabled: false,
      secret: testSecret(8),
    });
    expectInvalidField(changedSecret, 'secret');

    expect((await admin(t, 'DELETE', `${HOOKS}/crm`)).statusCode).toBe(204);
    expectError(await admin(t, 'DELETE', `${HOOKS}/crm`), 404, 'not_found');
    expectError(await admin(t, 'GET', `${HOOKS}/crm`), 404, 'not_found');
    // PATCH only updates: a deleted endpoint stays deleted.
    expectError(await admin(t, 'PATCH', `${HOOKS}/crm`, { enabled: true }), 404, 'not_found');
    expectError(await admin(t, 'GET', `${HOOKS}/crm`), 404, 'not_found');
  });

  it.skipIf(skip)('refuses bad ids, secrets and event names, duplicates, and unknown organizations', async () => {
    await createOrg(t);
    const url = 'http://127.0.0.1:9/hook';
    expectInvalidField(await admin(t, 'POST', HOOKS, { url, id: 'deliveries' }), 'id');
    expectInvalidField(await admin(t, 'POST', HOOKS, { url, id: 'Upper' }), 'id');
    expectInvalidField(await admin(t, 'POST', HOOKS, { url, secret: 'whsec_short' }), 'secret');
    expectInvalidField(await admin(t, 'POST', HOOKS, { url, events: ['message.exploded'] }), 'events.0');
    expectInvalidField(await admin(t, 'POST', HOOKS, { url, events: ['*', 'message.sent'] }), 'events.0');
    expectInvalidField(await admin(t, 'POST', HOOKS, { url, events: [] }), 'events');
    expectInvalidField(await admin(t, 'POST', HOOKS, { events: ['*'] }), 'url');
    expectInvalidField(await admin(t, 'POST', HOOKS, { url, colour: 'red' }), 'colour');
    expect((await admin(t, 'POST', HOOKS, { url, id: 'one' })).statusCode).toBe(201);
    expectError(await admin(t, 'POST', HOOKS, { url, id: 'one' }), 409, 'conflict');
    expectError(await admin(t, 'POST', '/organizations/nobody/webhooks', { url }), 404, 'not_found');
    expectError(await admin(t, 'GET', '/organizations/nobody/webhooks'), 404, 'not_found');
    expectError(await admin(t, 'GET', HOOKS, undefined, null), 401, 'unauthorized');
  });

  it.skipIf(skip)("rotate-secret answers the new secret and the old one's end; both are stored, 0 ends the old now", async () => {
    await createOrg(t);
    const first = testSecret(1);
    await admin(t, 'POST', HOOKS, { url: 'http://127.0.0.1:9/hook', id: 'crm', secret: first });
    const rotated = await admin(t, 'POST', `${HOOKS}/crm/rotate-secret`);
    expect(rotated.statusCode, rotated.body).toBe(200);
    const r = rotated.json<{ secret: string; previous_secret_expires_at: string | null }>();
    expect(r.secret).toMatch(SECRET_FORM);
    expect(r.previous_secret_expires_at).toBe('2026-01-02T00:00:00.000Z');
    const row = await endpointRow(t.store, 'crm');
    expect([row.secret, row.previous_secret]).toEqual([r.secret, first]);
    const shown = (await admin(t, 'GET', `${HOOKS}/crm`)).json<WebhookBody>();
    expect(shown.previous_secret_expires_at).toBe('2026-01-02T00:00:00.000Z');
    expect(JSON.stringify(shown)).not.toContain(first);

    const short = await admin(t, 'POST', `${HOOKS}/crm/rotate-secret`, { grace_seconds: 60 });
    expect(short.json<{ previous_secret_expires_at: string }>().previous_secret_expires_at).toBe('2026-01-01T00:01:00.000Z');
    const now = await admin(t, 'POST', `${HOOKS}/crm/rotate-secret`, { grace_seconds: 0 });
    expect(now.json<{ previous_secret_expires_at: string | null }>().previous_secret_expires_at).toBeNull();
    expect((await endpointRow(t.store, 'crm')).previous_secret).toBeNull();
    expectInvalidField(await admin(t, 'POST', `${HOOKS}/crm/rotate-secret`, { grace_seconds: -1 }), 'grace_seconds');
    expectError(await admin(t, 'POST', `${HOOKS}/nope/rotate-secret`), 404, 'not_found');
  });

  it.skipIf(skip)(
    're-enabling is one call: PATCH {"enabled": true} or POST …/enable clears the reason and the failure clock',
    async () => {
      await createOrg(t);
      await admin(t, 'POST', HOOKS, { url: 'http://127.0.0.1:9/hook', id: 'crm' });
      await setEndpointFields(t.store, 'crm', { enabled: 0, disabled_reason: '410 Gone', failing_since: 1_000 });
      const disabled = (await admin(t, 'GET', `${HOOKS}/crm`)).json<WebhookBody>();
      expect(disabled).toMatchObject({ enabled: false, disabled_reason: '410 Gone', failing_since: '1970-01-01T00:00:01.000Z' });
      const on = await admin(t, 'PATCH', `${HOOKS}/crm`, { enabled: true });
      expect(on.json<WebhookBody>()).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });

      const off = await admin(t, 'POST', `${HOOKS}/crm/disable`);
      expect(off.json<WebhookBody>()).toMatchObject({ enabled: false, disabled_reason: 'disabled by an operator' });
      await setEndpointFields(t.store, 'crm', { failing_since: 5_000 });
      const again = await admin(t, 'POST', `${HOOKS}/crm/enable`);
      expect(again.json<WebhookBody>()).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
      expectError(await admin(t, 'POST', `${HOOKS}/nope/enable`), 404, 'not_found');
    },
  );

  it.skipIf(skip)('development allows loopback http receivers, never other schemes', async () => {
    await createOrg(t);
    for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'https://[::1]/x']) {
      expect((await admin(t, 'POST', HOOKS, { url })).statusCode, url).toBe(201);
    }
    for (const url of [
      'javascript:alert(1)',
      'ftp://example.com/x',
      'file:///etc/passwd',
      'not a url',
      'http://user:pw@127.0.0.1/x',
    ]) {
      const err = expectError(await admin(t, 'POST', HOOKS, { url }), 400, 'invalid_body');
      expect(err.details?.fields?.[0]?.field, url).toBe('url');
    }
  });
});

describeDialects('admin webhook URL rules in production on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(
    dialect,
    skip,
    (app) => {
      t = app;
    },
    { MAILROOM_ENV: 'production' },
  );

  it.skipIf(skip)('refuses http, loopback, private, link-local and metadata hosts, at create, PUT and PATCH', async () => {
    await createOrg(t);
    const refused = [
      'http://hooks.example.com/x',
      'https://127.0.0.1/x',
      'https://169.254.169.254/latest/meta-data',
      'https://10.0.0.8/x',
      'https://[::1]/x',
      'https://localhost/x',
      'https://metadata.google.internal/x',
      'javascript:alert(1)',
    ];
    for (const url of refused) {
      const err = expectError(await admin(t, 'POST', HOOKS, { url }), 400, 'invalid_body');
      expect(err.details?.fields?.[0]?.field, url).toBe('url');
    }
    expectInvalidField(
      await admin(t, 'PUT', `${HOOKS}/crm`, { url: 'https://127.0.0.1/x', events: ['*'], enabled: true }),
      'url',
    );
    // A public address needs no lookup: allowed (nothing is sent at registration).
    const ok = await admin(t, 'POST', HOOKS, { url: 'https://93.184.215.14/hook', id: 'pub' });
    expect(ok.statusCode, ok.body).toBe(201);
    expectInvalidField(await admin(t, 'PATCH', `${HOOKS}/pub`, { url: 'https://192.168.1.1/x' }), 'url');
  });

  it.skipIf(skip || !privateHostname)('refuses a name that resolves to a private address', async () => {
    await createOrg(t);
    const err = expectError(await admin(t, 'POST', HOOKS, { url: `https://${os.hostname()}/hook` }), 400, 'invalid_body');
    expect(err.message).toMatch(/resolves to/);
  });
});

describeDialects('admin webhook URL rules with MAILROOM_WEBHOOK_ALLOW_PRIVATE on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(
    dialect,
    skip,
    (app) => {
      t = app;
    },
    { MAILROOM_ENV: 'production', MAILROOM_WEBHOOK_ALLOW_PRIVATE: 'true' },
  );

  it.skipIf(skip)('allows private receivers in production, http only to them', async () => {
    await createOrg(t);
    expect((await admin(t, 'POST', HOOKS, { url: 'https://10.0.0.8/x' })).statusCode).toBe(201);
    expect((await admin(t, 'POST', HOOKS, { url: 'http://10.0.0.8/x' })).statusCode).toBe(201);
    expect((await admin(t, 'POST', HOOKS, { url: 'https://93.184.215.14/x' })).statusCode).toBe(201);
    expectInvalidField(await admin(t, 'POST', HOOKS, { url: 'javascript:alert(1)' }), 'url');
    // Private addresses are opened, plaintext to the internet is not.
    const err = expectError(await admin(t, 'POST', HOOKS, { url: 'http://93.184.215.14/x' }), 400, 'invalid_body');
    expect(err.message).toMatch(/must use https in production: 93\.184\.215\.14 is a public address/);
  });
});

describe('sameSecret (PUT compares a given secret with the stored one)', () => {
  it('is true for the same text only, whatever the lengths', () => {
    expect(sameSecret(testSecret(1), testSecret(1))).toBe(true);
    expect(sameSecret(testSecret(1), testSecret(2))).toBe(false);
    expect(sameSecret(testSecret(1).slice(0, -1), testSecret(1))).toBe(false);
    expect(sameSecret('', testSecret(1))).toBe(false);
  });
});
