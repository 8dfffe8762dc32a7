import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/resources/config-file.js';
import { admin } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { insertMessage } from '../support/db.js';
import { providerEventRows } from '../support/events/record.js';
import { basic } from '../support/events/signing.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { recorded, post, serviceWithEvents } from '../support/events/intake.js';
import { describeDialects } from '../support/dialects.js';

/**
 * The intake URL and the service's events settings: what names a service (its token only),
 * what the admin API shows (the URL, never a secret), rotation, and the body limit.
 */
describeDialects('provider events intake on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  const PM = { source: 'postmark', username: 'hook', password: 'pm-secret-password' };
  const BOUNCE = JSON.stringify({ RecordType: 'Bounce', ID: 7, Type: 'HardBounce', MessageID: 'pm-7', Email: 'x@example.com' });

  it.skipIf(skip)('an unknown token, an org or service id, and a service without events all answer the same 404', async () => {
    await serviceWithEvents(t, 'pm', PM);
    const bare = await serviceWithEvents(t, 'bare', undefined);
    const auth = basic(PM.username, PM.password);
    const answers = await Promise.all([
      post(t, '/v1/provider-events/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', BOUNCE, auth),
      post(t, '/v1/provider-events/acme', BOUNCE, auth),
      post(t, '/v1/provider-events/pm', BOUNCE, auth),
      post(t, `/v1/provider-events/${'A'.repeat(90)}`, BOUNCE, auth),
      post(t, bare, BOUNCE, auth),
    ]);
    const messages = answers.map((res) => expectError(res, 404, 'not_found').message);
    expect(new Set(messages).size).toBe(1);
    expect(await recorded(t)).toEqual([]);
  });

  it.skipIf(skip)("an event about a message of the service's organization is recorded, and only once", async () => {
    const path = await serviceWithEvents(t, 'pm', PM);
    await insertMessage(t.store, 'acme', 'msg_0001', 'sent', t.clock.now() - 1000, true, 'pm');
    const body = JSON.stringify({
      RecordType: 'Delivery',
      MessageID: 'pm-9',
      Recipient: 'x@example.com',
      DeliveredAt: '2026-01-01T00:00:01Z',
      Metadata: { mailroom_message_id: 'msg_0001' },
    });
    const auth = basic(PM.username, PM.password);
    expect((await post(t, path, body, auth)).json()).toEqual({ received: 1, recorded: 1, duplicates: 0, unmatched: 0 });
    expect((await post(t, path, body, auth)).json()).toEqual({ received: 1, recorded: 0, duplicates: 1, unmatched: 0 });
    expect((await providerEventRows(t.store)).map((r) => [r.message_id, r.org_id, r.service_id])).toEqual([
      ['msg_0001', 'acme', 'pm'],
    ]);
  });

  it.skipIf(skip)('GET shows events_url and the settings with secrets masked; a PUT of the GET body keeps them', async () => {
    const path = await serviceWithEvents(t, 'pm', PM);
    const got = await admin(t, 'GET', '/organizations/acme/services/pm');
    expect(got.body).not.toContain(PM.password);
    const shown = got.json<{ events: Record<string, unknown>; events_url: string }>();
    expect(shown.events).toEqual({ source: 'postmark', username: 'hook', password: '********' });
    expect(shown.events_url).toBe(`http://mailroom.test${path}`);
    const again = await admin(t, 'PUT', '/organizations/acme/services/pm', shown);
    expect(again.statusCode, again.body).toBe(200);
    const stored = await t.store.services.get('acme', 'pm');
    expect(stored?.settings.events).toEqual(PM);
    expect((await post(t, path, BOUNCE, basic(PM.username, PM.password))).statusCode).toBe(200);
  });

  it.skipIf(skip)(
    'a source without the settings it verifies with is 400 naming them; the mask of nothing stored too',
    async () => {
      await serviceWithEvents(t, 'x', undefined);
      const missing = await admin(t, 'PUT', '/organizations/acme/services/x', {
        provider: 'outbox',
        default: false,
        events: { source: 'mailgun' },
      });
      expect(expectError(missing, 400, 'invalid_body').message).toContain('events.signing_key');
      const mask = await admin(t, 'PUT', '/organizations/acme/services/x', {
        provider: 'outbox',
        default: false,
        events: { source: 'resend', secret: '********' },
      });
      expect(expectError(mask, 400, 'invalid_body').message).toContain('events.secret');
      const patched = await admin(t, 'PATCH', '/organizations/acme/services/x', {
        events: { source: 'mailgun', signing_key: 'key-123' },
      });
      expect(patched.statusCode, patched.body).toBe(200);
      expect(patched.json<{ events: unknown }>().events).toEqual({ source: 'mailgun', signing_key: '********' });
    },
  );

  it.skipIf(skip)('rotating the token retires the old URL at once', async () => {
    const oldPath = await serviceWithEvents(t, 'pm', PM);
    const rotated = await admin(t, 'POST', '/organizations/acme/services/pm/events-token/rotate');
    expect(rotated.statusCode, rotated.body).toBe(200);
    const newPath = new URL(rotated.json<{ events_url: string }>().events_url).pathname;
    expect(newPath).not.toBe(oldPath);
    const auth = basic(PM.username, PM.password);
    expectError(await post(t, oldPath, BOUNCE, auth), 404, 'not_found');
    expect((await post(t, newPath, BOUNCE, auth)).statusCode).toBe(200);
    expectError(await admin(t, 'POST', '/organizations/acme/services/nope/events-token/rotate'), 404, 'not_found');
  });

  it.skipIf(skip)('a body over 1 MB is 413 in the envelope; SNS-style text/plain bodies reach the source', async () => {
    const path = await serviceWithEvents(t, 'pm', PM);
    const big = JSON.stringify({ RecordType: 'Bounce', pad: 'x'.repeat(1024 * 1024) });
    expectError(await post(t, path, big, basic(PM.username, PM.password)), 413, 'payload_too_large');
    const plain = await post(t, path, BOUNCE, {
      ...basic(PM.username, PM.password),
      'content-type': 'text/plain; charset=UTF-8',
    });
    expect(plain.statusCode, plain.body).toBe(200);
    expect(await recorded(t)).toHaveLength(1);
  });
});

describe('events in the config file', () => {
  const yaml = (events: string) =>
    `organizations:\n  - id: acme\n    services:\n      - id: mg\n        provider: outbox\n        events: ${events}\n`;

  it('takes a source with its settings and refuses one missing what it verifies with', () => {
    const ok = parseConfigText(yaml('{ source: mailgun, signing_key: key-1 }'), 'mailroom.yaml', {});
    expect(ok.organizations[0]?.services?.[0]?.events).toEqual({ source: 'mailgun', signing_key: 'key-1' });
    expect(() => parseConfigText(yaml('{ source: mailgun }'), 'mailroom.yaml', {})).toThrow(
      /services\/0\/events\/signing_key: is required when events.source is mailgun/,
    );
    expect(() => parseConfigText(yaml('{ source: sparkpost }'), 'mailroom.yaml', {})).toThrow();
  });
});
