import { describe, expect, it } from 'vitest';
import { applyConfig, generatedLines } from '../../src/admin/apply.js';
import { ConfigError } from '../../src/config/env.js';
import { parseConfigText } from '../../src/resources/config-file.js';
import type { LookupFn } from '../../src/webhooks/url-guard.js';
import { endpointRow, setEndpointFields } from '../support/webhooks/dispatch.js';
import { testSecret } from '../support/webhooks/receiver.js';
import { describeDialects, freshStoreEach } from '../support/dialects.js';

const DEV = { urlPolicy: { production: false, allowPrivate: false }, secretGraceMs: 3_600_000 };
const PROD = { urlPolicy: { production: true, allowPrivate: false }, secretGraceMs: 3_600_000 };

/** An organization with two webhook endpoints: one with its secret from ${CRM_SECRET}, one without. */
function yaml(crmUrl = 'http://127.0.0.1:4000/hooks', extra = ''): string {
  return `
organizations:
  - id: acme
    webhooks:
      - id: crm
        url: ${crmUrl}
        events: [message.delivered, message.bounced]
        description: CRM sync
        secret: "\${CRM_SECRET}"${extra}
      - id: audit
        url: http://127.0.0.1:4001/all
`;
}

describeDialects('webhooks in the config file on %s', (dialect, skip) => {
  const t = freshStoreEach(dialect, skip);

  it.skipIf(skip)(
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own ${VAR} syntax, named in the title.
    'creates endpoints (${VAR} secret, generated one reported once), and a second apply changes nothing',
    async () => {
      const env = { CRM_SECRET: testSecret(3) };
      const first = await applyConfig(t.store, parseConfigText(yaml(), 'f.yaml', env), DEV);
      expect(first.changes).toEqual(expect.arrayContaining(['webhook acme/crm: created', 'webhook acme/audit: created']));
      expect(first.generatedWebhookSecrets.map((g) => g.endpoint_id)).toEqual(['audit']);
      const generated = first.generatedWebhookSecrets[0]?.secret ?? '';
      expect(generated).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(generatedLines(first)).toContain(`  generated webhook secret for acme/audit: ${generated}`);

      const crm = await t.store.webhookEndpoints.get('acme', 'crm');
      expect(crm).toMatchObject({
        url: 'http://127.0.0.1:4000/hooks',
        events: ['message.delivered', 'message.bounced'],
        description: 'CRM sync',
        enabled: true,
        secret: env.CRM_SECRET,
      });
      expect(await t.store.webhookEndpoints.get('acme', 'audit')).toMatchObject({ events: '*', secret: generated });

      const second = await applyConfig(t.store, parseConfigText(yaml(), 'f.yaml', env), DEV);
      expect(second).toEqual({ changes: [], generatedKeys: [], generatedWebhookSecrets: [], warnings: [] });
    },
  );

  it.skipIf(skip)(
    'updates what differs, never re-enables what was disabled, disables on enabled: false, rotates to a new file secret',
    async () => {
      const env = { CRM_SECRET: testSecret(3) };
      await applyConfig(t.store, parseConfigText(yaml(), 'f.yaml', env), DEV);
      const moved = await applyConfig(t.store, parseConfigText(yaml('http://127.0.0.1:4002/new'), 'f.yaml', env), DEV);
      expect(moved.changes).toEqual(['webhook acme/crm: updated']);
      expect((await endpointRow(t.store, 'crm')).url).toBe('http://127.0.0.1:4002/new');

      // A 410 disabled it: a restart with the same file must not undo that.
      await setEndpointFields(t.store, 'crm', { enabled: 0, disabled_reason: '410 Gone' });
      const again = await applyConfig(
        t.store,
        parseConfigText(yaml('http://127.0.0.1:4002/new', '\n        enabled: true'), 'f.yaml', env),
        DEV,
      );
      expect(again.changes).toEqual([]);
      expect((await endpointRow(t.store, 'audit')).enabled).toBe(1);
      const off = await applyConfig(
        t.store,
        parseConfigText(yaml('http://127.0.0.1:4002/new', '\n        enabled: false'), 'f.yaml', { CRM_SECRET: testSecret(3) }),
        DEV,
      );
      expect(off.changes).toEqual([]);
      await setEndpointFields(t.store, 'crm', { enabled: 1, disabled_reason: null });
      const disabled = await applyConfig(
        t.store,
        parseConfigText(yaml('http://127.0.0.1:4002/new', '\n        enabled: false'), 'f.yaml', env),
        DEV,
      );
      expect(disabled.changes).toEqual(['webhook acme/crm: updated']);
      expect(await endpointRow(t.store, 'crm')).toMatchObject({ enabled: 0, disabled_reason: 'disabled by an operator' });

      // A new value in ${CRM_SECRET}: the new secret signs, the old one beside it for the grace.
      const rotated = await applyConfig(
        t.store,
        parseConfigText(yaml('http://127.0.0.1:4002/new', '\n        enabled: false'), 'f.yaml', { CRM_SECRET: testSecret(4) }),
        DEV,
      );
      expect(rotated.changes).toEqual(['webhook acme/crm: secret replaced (the old one signs too for 3600 s)']);
      const row = await endpointRow(t.store, 'crm');
      expect([row.secret, row.previous_secret, row.previous_secret_expires_at]).toEqual([
        testSecret(4),
        testSecret(3),
        t.clock.now() + 3_600_000,
      ]);
    },
  );

  it.skipIf(skip)('production rules stop the apply naming the field; nothing is written', async () => {
    const config = parseConfigText(yaml(), 'f.yaml', { CRM_SECRET: testSecret(3) });
    const err = await applyConfig(t.store, config, PROD).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(String(err)).toContain('organizations/0/webhooks/0/url: must use https in production');
    expect(String(err)).toContain('organizations/0/webhooks/1/url: must use https in production');
    expect(await t.store.organizations.get('acme')).toBeUndefined();
    // Left out, the options are the production ones: a caller that forgets is strict.
    await expect(applyConfig(t.store, config)).rejects.toThrow(/must use https in production/);
  });

  it.skipIf(skip)(
    'production: a name that does not resolve now is applied with a warning; one resolving to a private address stops the start',
    async () => {
      const lookup: LookupFn = async (hostname) => {
        if (hostname === 'internal.example.com') return [{ address: '10.0.0.7', family: 4 }];
        throw Object.assign(new Error(`getaddrinfo EAI_AGAIN ${hostname}`), { code: 'EAI_AGAIN' });
      };
      const env = { CRM_SECRET: testSecret(3) };
      const file = (crm: string) =>
        parseConfigText(yaml(crm).replace('http://127.0.0.1:4001/all', 'https://93.184.215.14/all'), 'f.yaml', env);
      const report = await applyConfig(t.store, file('https://hooks.example.com/crm'), { ...PROD, lookup });
      expect(report.changes).toContain('webhook acme/crm: created');
      expect(report.warnings).toEqual([
        'webhook acme/crm: organizations/0/webhooks/0/url: host ' +
          'hooks.example.com does not resolve now; accepted, and checked again at every connection',
      ]);
      expect(generatedLines(report)).toContain(`  warning: ${report.warnings[0]}`);
      expect((await endpointRow(t.store, 'crm')).url).toBe('https://hooks.example.com/crm');
      await expect(applyConfig(t.store, file('https://internal.example.com/crm'), { ...PROD, lookup })).rejects.toThrow(
        /organizations\/0\/webhooks\/0\/url: host internal\.example\.com resolves to 10\.0\.0\.7, which is a blocked address/,
      );
    },
  );
});

describe('webhooks in the config file: what the file itself gets wrong', () => {
  const problems = (text: string, env: Record<string, string> = {}): string => {
    try {
      parseConfigText(text, 'f.yaml', env);
      return '';
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return String(e);
    }
  };

  it('names unknown event types, "*" mixed in, duplicate ids, bad secrets, bad URLs and missing variables', () => {
    const text = `
organizations:
  - id: acme
    webhooks:
      - { id: a, url: "http://127.0.0.1/a", events: [message.exploded] }
      - { id: a, url: "javascript:alert(1)", events: ["*", message.sent] }
      - { id: b, url: "http://127.0.0.1/b", secret: whsec_short }
      - { id: c, url: "http://127.0.0.1/c", secret: "\${MISSING_SECRET}" }
      - { id: deliveries, url: "http://127.0.0.1/d" }
`;
    expect(problems(text)).toContain('organizations/0/webhooks/3/secret: environment variable MISSING_SECRET is not set');
    const found = problems(text, { MISSING_SECRET: testSecret(1) });
    expect(found).toContain('organizations/0/webhooks/4/id');
    const fixed = problems(text.replace('      - { id: deliveries, url: "http://127.0.0.1/d" }\n', ''), {
      MISSING_SECRET: testSecret(1),
    });
    expect(fixed).toContain('organizations/0/webhooks/0/events/0: "message.exploded" is not an event type');
    expect(fixed).toContain('organizations/0/webhooks/1/id: webhook "a" appears twice');
    expect(fixed).toContain('organizations/0/webhooks/1/events/0: is "*"');
    expect(fixed).toContain('organizations/0/webhooks/1/url: must be an absolute http or https URL');
    expect(fixed).toContain('organizations/0/webhooks/2/secret: must be whsec_');
    expect(fixed).not.toContain('webhooks/3');
  });
});
