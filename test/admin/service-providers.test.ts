import { expect, it } from 'vitest';
import { freshAppEach, type TestApp } from '../support/app.js';
import { admin, createOrg } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { describeDialects } from '../support/dialects.js';

/** One valid service body per HTTP provider, each with its secret in clear. */
const BODIES: Record<string, Record<string, unknown>> = {
  ses: {
    provider: 'ses',
    default: false,
    ses: {
      region: 'eu-west-1',
      access_key_id: 'AKIAEXAMPLE123456789',
      secret_access_key: 'ses-secret-value',
      configuration_set: 'tx-set',
      endpoint: 'http://127.0.0.1:9',
    },
  },
  postmark: { provider: 'postmark', default: false, postmark: { server_token: 'pm-token-value' } },
  sendgrid: { provider: 'sendgrid', default: false, sendgrid: { api_key: 'SG.sendgrid-key-value' } },
  mailgun: { provider: 'mailgun', default: false, mailgun: { domain: 'mg.example.com', api_key: 'mailgun-key-value' } },
  resend: {
    provider: 'resend',
    default: false,
    resend: { api_key: 're_resend_key_value', endpoint: 'https://api.resend.example' },
  },
};
const SECRETS = ['ses-secret-value', 'pm-token-value', 'SG.sendgrid-key-value', 'mailgun-key-value', 're_resend_key_value'];

type Fields = Array<{ field: string; message: string }>;
const fieldsOf = (error: { details?: Record<string, unknown> }): Fields => (error.details?.fields ?? []) as Fields;

describeDialects('admin services: provider settings and failover on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  it.skipIf(skip)("each provider's block is stored with its defaults; its secret is write-only", async () => {
    await createOrg(t);
    for (const [id, body] of Object.entries(BODIES)) {
      const res = await admin(t, 'PUT', `/organizations/acme/services/${id}`, body);
      expect(res.statusCode, res.body).toBe(201);
    }
    const list = await admin(t, 'GET', '/organizations/acme/services');
    expect(list.statusCode).toBe(200);
    for (const secret of SECRETS) expect(list.body).not.toContain(secret);
    const byId = new Map(list.json<{ items: Array<Record<string, unknown>> }>().items.map((s) => [s.id, s]));
    expect(byId.get('ses')?.ses).toEqual({
      region: 'eu-west-1',
      access_key_id: 'AKIAEXAMPLE123456789',
      secret_access_key: '********',
      configuration_set: 'tx-set',
      endpoint: 'http://127.0.0.1:9',
    });
    expect(byId.get('postmark')?.postmark).toEqual({ server_token: '********', message_stream: 'outbound' });
    expect(byId.get('sendgrid')?.sendgrid).toEqual({ api_key: '********' });
    expect(byId.get('mailgun')?.mailgun).toEqual({ domain: 'mg.example.com', api_key: '********', region: 'us' });
    expect(byId.get('resend')?.resend).toEqual({ api_key: '********', endpoint: 'https://api.resend.example' });
    // The transports read the stored blocks: secrets in clear, defaults written out.
    expect((await t.store.services.get('acme', 'postmark'))?.settings.postmark).toEqual({
      server_token: 'pm-token-value',
      message_stream: 'outbound',
    });
    expect((await t.store.services.get('acme', 'mailgun'))?.settings.mailgun).toEqual({
      domain: 'mg.example.com',
      api_key: 'mailgun-key-value',
      region: 'us',
    });
    expect((await t.store.services.get('acme', 'ses'))?.settings.ses).toMatchObject({ secret_access_key: 'ses-secret-value' });
    // SES without keys: the AWS SDK's default chain.
    const chain = await admin(t, 'PUT', '/organizations/acme/services/ses-chain', {
      provider: 'ses',
      default: false,
      ses: { region: 'us-east-1' },
    });
    expect(chain.statusCode, chain.body).toBe(201);
    expect(chain.json<Record<string, unknown>>().ses).toEqual({ region: 'us-east-1' });
  });

  it.skipIf(skip)(
    'GET → PUT with the masks keeps the stored secrets; a mask with nothing stored is a 400 naming it',
    async () => {
      await createOrg(t);
      for (const [id, body] of Object.entries(BODIES))
        expect((await admin(t, 'PUT', `/organizations/acme/services/${id}`, body)).statusCode).toBe(201);
      for (const id of Object.keys(BODIES)) {
        const got = (await admin(t, 'GET', `/organizations/acme/services/${id}`)).json<Record<string, unknown>>();
        const again = await admin(t, 'PUT', `/organizations/acme/services/${id}`, got);
        expect(again.statusCode, again.body).toBe(200);
      }
      expect((await t.store.services.get('acme', 'sendgrid'))?.settings.sendgrid).toEqual({ api_key: 'SG.sendgrid-key-value' });
      expect((await t.store.services.get('acme', 'ses'))?.settings.ses).toMatchObject({ secret_access_key: 'ses-secret-value' });
      const fresh = await admin(t, 'PUT', '/organizations/acme/services/other', {
        provider: 'resend',
        default: false,
        resend: { api_key: '********' },
      });
      expect(fieldsOf(expectError(fresh, 400, 'invalid_body'))).toEqual([
        { field: 'resend.api_key', message: 'is the mask of a secret that is not stored' },
      ]);
    },
  );

  it.skipIf(skip)('PATCH merges a provider block one level deep and keeps its secret', async () => {
    await createOrg(t);
    expect((await admin(t, 'PUT', '/organizations/acme/services/mg', BODIES.mailgun)).statusCode).toBe(201);
    const res = await admin(t, 'PATCH', '/organizations/acme/services/mg', { from_name: 'Acme' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<Record<string, unknown>>().mailgun).toEqual({ domain: 'mg.example.com', api_key: '********', region: 'us' });
    expect((await t.store.services.get('acme', 'mg'))?.settings.mailgun).toEqual({
      domain: 'mg.example.com',
      api_key: 'mailgun-key-value',
      region: 'us',
    });
    // The key is bound to where it goes: a new region comes with the key (test/admin/services-secret-binding.test.ts).
    expectError(await admin(t, 'PATCH', '/organizations/acme/services/mg', { mailgun: { region: 'eu' } }), 400, 'invalid_body');
    const key = await admin(t, 'PATCH', '/organizations/acme/services/mg', {
      mailgun: { region: 'eu', api_key: 'new-mailgun-key' },
    });
    expect(key.statusCode, key.body).toBe(200);
    expect((await t.store.services.get('acme', 'mg'))?.settings.mailgun).toMatchObject({
      api_key: 'new-mailgun-key',
      region: 'eu',
    });
    const rotated = await admin(t, 'PATCH', '/organizations/acme/services/mg', { mailgun: { api_key: 'newer-mailgun-key' } });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect((await t.store.services.get('acme', 'mg'))?.settings.mailgun).toMatchObject({
      api_key: 'newer-mailgun-key',
      region: 'eu',
    });
    // The provider of an existing service is fixed (issue 29): a PATCH naming another is a 400 naming `provider`,
    // with or without the new provider's block, and nothing changes.
    for (const body of [{ provider: 'resend' }, { provider: 'resend', resend: { api_key: 're_new' } }]) {
      const refused = expectError(await admin(t, 'PATCH', '/organizations/acme/services/mg', body), 400, 'invalid_body');
      expect(fieldsOf(refused).map((f) => f.field)).toEqual(['provider']);
    }
    expect((await t.store.services.get('acme', 'mg'))?.provider).toBe('mailgun');
    expect((await t.store.services.get('acme', 'mg'))?.settings.resend).toBeUndefined();
  });

  it.skipIf(skip)('the block must match the provider; bad values are 400s naming the field', async () => {
    await createOrg(t);
    const put = (body: Record<string, unknown>) => admin(t, 'PUT', '/organizations/acme/services/s', body);
    expect(fieldsOf(expectError(await put({ provider: 'sendgrid', default: false }), 400, 'invalid_body'))).toEqual([
      { field: 'sendgrid', message: 'is required when provider is sendgrid' },
    ]);
    expect(
      fieldsOf(expectError(await put({ provider: 'postmark', default: false, sendgrid: { api_key: 'k' } }), 400, 'invalid_body')),
    ).toEqual([
      { field: 'postmark', message: 'is required when provider is postmark' },
      { field: 'sendgrid', message: 'is the settings of provider sendgrid, but provider is postmark' },
    ]);
    expect(
      fieldsOf(
        expectError(
          await put({ provider: 'ses', default: false, ses: { region: 'eu-west-1', access_key_id: 'AKIAEXAMPLE' } }),
          400,
          'invalid_body',
        ),
      ),
    ).toEqual([{ field: 'ses.secret_access_key', message: expect.stringContaining('give both, or neither') }]);
    const badRegion = expectError(
      await put({ provider: 'mailgun', default: false, mailgun: { domain: 'mg.example.com', api_key: 'k', region: 'ap' } }),
      400,
      'invalid_body',
    );
    expect(badRegion.message).toContain('mailgun');
    const badEndpoint = expectError(
      await put({ provider: 'resend', default: false, resend: { api_key: 'k', endpoint: 'ftp://x.example' } }),
      400,
      'invalid_body',
    );
    expect(badEndpoint.message).toContain('endpoint');
    expectError(await put({ provider: 'ses', default: false, ses: { region: 'Europe' } }), 400, 'invalid_body');
    expectError(await put({ provider: 'sendgrid', default: false, sendgrid: { api_key: '' } }), 400, 'invalid_body');
    expectError(await put({ provider: 'sparkpost', default: false }), 400, 'invalid_body');
    expect(await t.store.services.get('acme', 's')).toBeUndefined();
  });

  it.skipIf(skip)('failover names existing services of the organization, not itself, without cycles', async () => {
    await createOrg(t);
    await createOrg(t, 'other');
    const put = (id: string, body: Record<string, unknown>, org = 'acme') =>
      admin(t, 'PUT', `/organizations/${org}/services/${id}`, body);
    expect((await put('backup', { provider: 'outbox', default: false })).statusCode).toBe(201);
    expect((await put('elsewhere', { provider: 'outbox', default: false }, 'other')).statusCode).toBe(201);
    const ok = await put('primary', { ...BODIES.postmark, failover: ['backup'], failover_on_service_error: true });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json<Record<string, unknown>>()).toMatchObject({ failover: ['backup'], failover_on_service_error: true });
    expect((await t.store.services.get('acme', 'primary'))?.settings).toMatchObject({
      failover: ['backup'],
      failover_on_service_error: true,
    });

    expect(
      fieldsOf(expectError(await put('primary', { ...BODIES.postmark, failover: ['elsewhere'] }), 400, 'invalid_body')),
    ).toEqual([{ field: 'failover.0', message: 'names "elsewhere", which is no service of this organization' }]);
    expect(
      fieldsOf(expectError(await put('primary', { ...BODIES.postmark, failover: ['primary'] }), 400, 'invalid_body')),
    ).toEqual([{ field: 'failover.0', message: 'is the service itself ("primary")' }]);
    expect(
      fieldsOf(expectError(await put('primary', { ...BODIES.postmark, failover: ['backup', 'backup'] }), 400, 'invalid_body')),
    ).toEqual([{ field: 'failover.1', message: 'names "backup" twice' }]);
    // backup → primary while primary → backup: a cycle, refused; the stored chain is unchanged.
    const cycle = expectError(
      await put('backup', { provider: 'outbox', default: false, failover: ['primary'] }),
      400,
      'invalid_body',
    );
    expect(fieldsOf(cycle)).toEqual([{ field: 'failover', message: 'makes a cycle: backup → primary → backup' }]);
    expect((await t.store.services.get('acme', 'backup'))?.settings.failover).toBeUndefined();
    // A longer one: third → primary → backup → third.
    expect((await put('third', { provider: 'outbox', default: false })).statusCode).toBe(201);
    expect((await put('backup', { provider: 'outbox', default: false, failover: ['third'] })).statusCode).toBe(200);
    const long = expectError(
      await put('third', { provider: 'outbox', default: false, failover: ['primary'] }),
      400,
      'invalid_body',
    );
    expect(fieldsOf(long)[0]?.message).toBe('makes a cycle: third → primary → backup → third');
    // PATCH goes through the same rules.
    expectError(await admin(t, 'PATCH', '/organizations/acme/services/third', { failover: ['nope'] }), 400, 'invalid_body');
    const patched = await admin(t, 'PATCH', '/organizations/acme/services/primary', { failover: [] });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json<Record<string, unknown>>().failover).toEqual([]);
  });
});
