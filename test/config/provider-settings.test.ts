import { describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/apply.js';
import { ConfigError } from '../../src/config/env.js';
import { parseConfigText } from '../../src/resources/config-file.js';
import { describeDialects, freshStoreEach } from '../support/dialects.js';

function problemsOf(yaml: string, env: Record<string, string> = {}): string {
  try {
    parseConfigText(yaml, 'test.yaml', env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('expected a ConfigError');
}

const withServices = (services: string) => `organizations:\n  - id: acme\n    services:\n${services}`;

/** Every HTTP provider, secrets from the environment as an operator would write them. */
const ALL = withServices(`
      - id: ses
        provider: ses
        ses: { region: eu-west-1, access_key_id: AKIAEXAMPLE123456789, secret_access_key: "\${SES_SECRET}",
               configuration_set: tx }
      - id: pm
        provider: postmark
        default: true
        postmark: { server_token: "\${PM_TOKEN}" }
        failover: [sg, mg]
        failover_on_service_error: true
      - id: sg
        provider: sendgrid
        sendgrid: { api_key: "\${SG_KEY}" }
      - id: mg
        provider: mailgun
        mailgun: { domain: mg.example.com, api_key: "\${MG_KEY}", region: eu }
        failover: [rs]
      - id: rs
        provider: resend
        resend: { api_key: "\${RS_KEY}", endpoint: "http://127.0.0.1:8025" }
`);
const ENV = { SES_SECRET: 'ses-secret', PM_TOKEN: 'pm-token', SG_KEY: 'sg-key', MG_KEY: 'mg-key', RS_KEY: 're_key' };

describe('config file: provider settings and failover', () => {
  it("reads every provider's block", () => {
    const config = parseConfigText(ALL, 'test.yaml', ENV);
    expect(config.organizations[0]?.services?.map((s) => s.provider)).toEqual([
      'ses',
      'postmark',
      'sendgrid',
      'mailgun',
      'resend',
    ]);
  });

  it("a provider without its block, a block of another provider, half of SES's keys: each named with its path", () => {
    const message = problemsOf(
      withServices(`
      - { id: a, provider: sendgrid }
      - { id: b, provider: ses, ses: { region: eu-west-1, access_key_id: AKIAEXAMPLE } }
      - { id: c, provider: postmark, postmark: { server_token: t }, resend: { api_key: k } }
      - { id: d, provider: smtp }
`),
    );
    expect(message).toContain('test.yaml');
    expect(message).toContain('organizations/0/services/0: provider sendgrid needs a sendgrid block');
    expect(message).toContain('organizations/0/services/1/ses/secret_access_key: is required with the other key');
    expect(message).toContain('organizations/0/services/2/resend: is the settings of provider resend, but provider is postmark');
    expect(message).toContain('organizations/0/services/3: provider smtp needs an smtp block');
  });

  it('schema errors in a block: an unknown region, a bad endpoint, an unknown provider', () => {
    const message = problemsOf(
      withServices(`
      - { id: a, provider: mailgun, mailgun: { domain: mg.example.com, api_key: k, region: ap } }
      - { id: b, provider: resend, resend: { api_key: k, endpoint: "ftp://x" } }
      - { id: c, provider: sparkpost }
`),
    );
    expect(message).toMatch(/organizations\/0\/services\/0\/mailgun\/region/);
    expect(message).toMatch(/organizations\/0\/services\/1\/resend\/endpoint/);
    expect(message).toMatch(/organizations\/0\/services\/2\/provider/);
  });

  it('endpoint: http to a public host is refused (the secret would cross in clear); https or loopback http taken', () => {
    const message = problemsOf(
      withServices(`
      - { id: a, provider: postmark, postmark: { server_token: t, endpoint: "http://api.postmarkapp.com" } }
      - { id: b, provider: sendgrid, sendgrid: { api_key: k, endpoint: "http://127.0.0.1@attacker.example" } }
      - { id: c, provider: mailgun,
          mailgun: { domain: mg.example.com, api_key: k, endpoint: "http://localhost.attacker.example" } }
      - { id: d, provider: ses, ses: { region: eu-west-1, endpoint: "http://10.0.0.5:4566" } }
`),
    );
    for (const path of ['0/postmark', '1/sendgrid', '2/mailgun', '3/ses'])
      expect(message).toContain(`organizations/0/services/${path}/endpoint`);
    const ok = parseConfigText(
      withServices(`
      - { id: a, provider: postmark, postmark: { server_token: t, endpoint: "https://api.postmarkapp.com" } }
      - { id: b, provider: sendgrid, sendgrid: { api_key: k, endpoint: "http://127.0.0.1:8025/v3" } }
      - { id: c, provider: mailgun, mailgun: { domain: mg.example.com, api_key: k, endpoint: "http://localhost:8025" } }
      - { id: d, provider: ses, ses: { region: eu-west-1, endpoint: "http://[::1]:4566" } }
`),
      'test.yaml',
      {},
    );
    expect(ok.organizations[0]?.services).toHaveLength(4);
  });

  it('failover: unknown services, itself, twice, cycles', () => {
    const message = problemsOf(
      withServices(`
      - { id: a, provider: outbox, failover: [nope] }
      - { id: b, provider: outbox, failover: [b] }
      - { id: c, provider: outbox, failover: [a, a] }
      - { id: x, provider: outbox, failover: [y] }
      - { id: y, provider: outbox, failover: [x] }
`),
    );
    expect(message).toContain('organizations/0/services/0/failover/0: names "nope", which is no service of this organization');
    expect(message).toContain('organizations/0/services/1/failover/0: is the service itself ("b")');
    expect(message).toContain('organizations/0/services/2/failover/1: names "a" twice');
    expect(message).toContain('organizations/0/services/3/failover: makes a cycle: x → y → x');
  });
});

describeDialects('config file: provider settings applied on %s', (dialect, skip) => {
  const t = freshStoreEach(dialect, skip);

  it.skipIf(skip)('stores each block with its defaults and the failover chain; a second apply changes nothing', async () => {
    const first = await applyConfig(t.store, parseConfigText(ALL, 'test.yaml', ENV));
    expect(first.changes).toEqual(expect.arrayContaining(['service acme/pm: created', 'service acme/rs: created']));
    const pm = await t.store.services.get('acme', 'pm');
    expect(pm?.provider).toBe('postmark');
    expect(pm?.settings).toMatchObject({
      postmark: { server_token: 'pm-token', message_stream: 'outbound' },
      failover: ['sg', 'mg'],
      failover_on_service_error: true,
    });
    expect((await t.store.services.get('acme', 'mg'))?.settings.mailgun).toEqual({
      domain: 'mg.example.com',
      api_key: 'mg-key',
      region: 'eu',
    });
    expect((await t.store.services.get('acme', 'ses'))?.settings.ses).toEqual({
      region: 'eu-west-1',
      access_key_id: 'AKIAEXAMPLE123456789',
      secret_access_key: 'ses-secret',
      configuration_set: 'tx',
    });
    expect((await t.store.services.get('acme', 'rs'))?.settings.resend).toEqual({
      api_key: 're_key',
      endpoint: 'http://127.0.0.1:8025',
    });
    const second = await applyConfig(t.store, parseConfigText(ALL, 'test.yaml', ENV));
    expect(second.changes.filter((c) => c.startsWith('service '))).toEqual([]);
    // A rotated key in the environment is an update.
    const third = await applyConfig(t.store, parseConfigText(ALL, 'test.yaml', { ...ENV, SG_KEY: 'sg-key-2' }));
    expect(third.changes).toContain('service acme/sg: updated');
    expect((await t.store.services.get('acme', 'sg'))?.settings.sendgrid).toEqual({ api_key: 'sg-key-2' });
  });
});
