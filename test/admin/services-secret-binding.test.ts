import { afterEach, expect, it } from 'vitest';
import { startPostmark } from '../support/providers/fakes/postmark.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { Closer } from '../support/cleanup.js';
import { admin, createOrg } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { describeDialects } from '../support/dialects.js';

/**
 * A masked secret ("********") keeps the stored one only while what decides where it goes is
 * unchanged: an admin who cannot read a token must not be able to point it at a server of
 * theirs (PATCH endpoint, then POST …/test) and read it there. And an API endpoint is https,
 * or http to a loopback host only.
 */

type Fields = Array<{ field: string; message: string }>;
const fieldsOf = (error: { details?: Record<string, unknown> }): Fields => (error.details?.fields ?? []) as Fields;

/** One service per HTTP provider, its secret in clear, and a change of each setting its secret is bound to. */
const CASES: Array<{ provider: string; block: Record<string, unknown>; secret: string; changes: Array<Record<string, string>> }> =
  [
    {
      provider: 'ses',
      secret: 'secret_access_key',
      block: {
        region: 'eu-west-1',
        access_key_id: 'AKIAEXAMPLE123456789',
        secret_access_key: 'ses-secret-value',
        endpoint: 'http://127.0.0.1:9',
      },
      changes: [{ endpoint: 'https://ses.attacker.example' }, { region: 'us-east-1' }, { access_key_id: 'AKIAOTHER0000000000' }],
    },
    {
      provider: 'postmark',
      secret: 'server_token',
      block: { server_token: 'pm-token-value' },
      changes: [{ endpoint: 'http://127.0.0.1:9' }],
    },
    {
      provider: 'sendgrid',
      secret: 'api_key',
      block: { api_key: 'SG.key-value', endpoint: 'http://127.0.0.1:9' },
      changes: [{ endpoint: 'https://sg.attacker.example' }],
    },
    {
      provider: 'mailgun',
      secret: 'api_key',
      block: { domain: 'mg.example.com', api_key: 'mailgun-key-value' },
      changes: [{ endpoint: 'https://mg.attacker.example' }, { region: 'eu' }, { domain: 'mg.attacker.example' }],
    },
    {
      provider: 'resend',
      secret: 'api_key',
      block: { api_key: 're_key_value', endpoint: 'https://api.resend.example' },
      changes: [{ endpoint: 'http://localhost:9' }],
    },
  ];

describeDialects('admin services: a masked secret stays where it was on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });
  const closer = new Closer();
  afterEach(async () => {
    await closer.closeAll();
  });
  const put = (id: string, body: unknown) => admin(t, 'PUT', `/organizations/acme/services/${id}`, body);
  const patch = (id: string, body: unknown) => admin(t, 'PATCH', `/organizations/acme/services/${id}`, body);

  it.skipIf(skip)(
    'PATCH endpoint to another server keeps the token home: 400 ' +
      'naming server_token, and the test call still goes to the old endpoint',
    async () => {
      const home = await startPostmark('pm-real-token');
      const attacker = await startPostmark('unused');
      closer.defer(() => home.close());
      closer.defer(() => attacker.close());
      await createOrg(t);
      expect(
        (
          await put('pm', {
            provider: 'postmark',
            default: true,
            postmark: { server_token: 'pm-real-token', endpoint: home.url },
          })
        ).statusCode,
      ).toBe(201);

      const moved = expectError(await patch('pm', { postmark: { endpoint: attacker.url } }), 400, 'invalid_body');
      expect(fieldsOf(moved)).toEqual([
        { field: 'postmark.server_token', message: expect.stringContaining('send the secret again when the endpoint changes') },
      ]);
      expect(fieldsOf(moved)[0]?.message).toContain('postmark.endpoint changed');
      expect((await t.store.services.get('acme', 'pm'))?.settings.postmark).toEqual({
        server_token: 'pm-real-token',
        message_stream: 'outbound',
        endpoint: home.url,
      });
      // GET → edit the endpoint → PUT with the mask: the same refusal.
      const got = (await admin(t, 'GET', '/organizations/acme/services/pm')).json<Record<string, Record<string, unknown>>>();
      expectError(await put('pm', { ...got, postmark: { ...got.postmark, endpoint: attacker.url } }), 400, 'invalid_body');

      const test = await admin(t, 'POST', '/organizations/acme/services/pm/test');
      expect(test.statusCode, test.body).toBe(200);
      expect(home.requests.map((r) => r.headers['x-postmark-server-token'])).toEqual(['pm-real-token']);
      expect(attacker.requests).toHaveLength(0);

      // With the token sent again, the endpoint may change; the new endpoint gets only that token.
      const ok = await patch('pm', { postmark: { endpoint: attacker.url, server_token: 'unused' } });
      expect(ok.statusCode, ok.body).toBe(200);
      expect((await admin(t, 'POST', '/organizations/acme/services/pm/test')).statusCode).toBe(200);
      expect(attacker.requests.map((r) => r.headers['x-postmark-server-token'])).toEqual(['unused']);
    },
  );

  it.skipIf(skip)(
    'every provider: a changed endpoint, region, domain or access key id with the mask is a 400; with the secret it is stored',
    async () => {
      await createOrg(t);
      for (const { provider, block, secret, changes } of CASES) {
        expect((await put(provider, { provider, default: false, [provider]: block })).statusCode).toBe(201);
        const before = (await t.store.services.get('acme', provider))?.settings[provider];
        for (const change of changes) {
          const [name] = Object.keys(change);
          const refused = expectError(await patch(provider, { [provider]: change }), 400, 'invalid_body');
          expect(fieldsOf(refused), `${provider} ${name}`).toEqual([
            { field: `${provider}.${secret}`, message: expect.stringContaining(`${provider}.${name} changed`) },
          ]);
          expect((await t.store.services.get('acme', provider))?.settings[provider]).toEqual(before);
        }
        // The same changes at once, with the secret given again: accepted and stored.
        const all = Object.assign({}, ...changes, { [secret]: `${provider}-new-secret` }) as Record<string, string>;
        const res = await patch(provider, { [provider]: all });
        expect(res.statusCode, res.body).toBe(200);
        expect((await t.store.services.get('acme', provider))?.settings[provider]).toMatchObject(all);
        // Nothing bound changed: the mask keeps the (new) stored secret, as before.
        const got = (await admin(t, 'GET', `/organizations/acme/services/${provider}`)).json<Record<string, unknown>>();
        expect((await put(provider, got)).statusCode).toBe(200);
        expect((await t.store.services.get('acme', provider))?.settings[provider]).toMatchObject({
          [secret]: `${provider}-new-secret`,
        });
      }
    },
  );

  it.skipIf(skip)(
    'SMTP: the pass mask with another host, port or user is a 400 naming smtp.pass; other changes keep it',
    async () => {
      await createOrg(t);
      const smtp = { host: 'smtp.example.com', port: 587, user: 'mailer', pass: 's3cret' };
      expect((await put('relay', { provider: 'smtp', default: true, smtp })).statusCode).toBe(201);
      for (const change of [{ host: '127.0.0.1' }, { port: 2525 }, { user: 'someone-else' }]) {
        const [name] = Object.keys(change);
        const refused = expectError(await patch('relay', { smtp: change }), 400, 'invalid_body');
        expect(fieldsOf(refused), name).toEqual([
          { field: 'smtp.pass', message: expect.stringContaining(`smtp.${name} changed: send the secret again`) },
        ]);
      }
      expect((await t.store.services.get('acme', 'relay'))?.settings.smtp).toMatchObject(smtp);
      // TLS mode and the default sender do not send the password elsewhere: the mask keeps it.
      const kept = await patch('relay', { smtp: { secure: true }, from_email: 'noreply@example.com' });
      expect(kept.statusCode, kept.body).toBe(200);
      expect((await t.store.services.get('acme', 'relay'))?.settings.smtp).toMatchObject({ ...smtp, secure: true });
      // A new host with the password given again.
      const moved = await patch('relay', { smtp: { host: 'smtp2.example.com', pass: 'n3w' } });
      expect(moved.statusCode, moved.body).toBe(200);
      expect((await t.store.services.get('acme', 'relay'))?.settings.smtp).toMatchObject({
        host: 'smtp2.example.com',
        pass: 'n3w',
      });
    },
  );

  it.skipIf(skip)('endpoint: https, or http to a loopback host only', async () => {
    await createOrg(t);
    const body = (endpoint: string) => ({ provider: 'resend', default: false, resend: { api_key: 're_key', endpoint } });
    for (const endpoint of [
      'https://api.resend.example/v1',
      'http://127.0.0.1:9',
      'http://127.10.0.1',
      'http://localhost:8080',
      'http://[::1]:9',
    ]) {
      const res = await put('rs', body(endpoint));
      expect(res.statusCode, `${endpoint}: ${res.body}`).toBeLessThan(300);
    }
    for (const endpoint of [
      'http://api.resend.example',
      'http://10.0.0.5',
      'http://127.0.0.1@attacker.example',
      'http://localhost.attacker.example',
      'http://128.0.0.1',
    ]) {
      const refused = expectError(await put('rs', body(endpoint)), 400, 'invalid_body');
      expect(refused.message, endpoint).toContain('endpoint');
    }
    expect((await t.store.services.get('acme', 'rs'))?.settings.resend).toMatchObject({ endpoint: 'http://[::1]:9' });
  });
});
