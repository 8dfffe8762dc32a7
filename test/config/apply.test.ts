import { expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/apply.js';
import { ConfigError } from '../../src/config/env.js';
import { parseConfigText, readConfigFile } from '../../src/resources/config-file.js';
import { sha256 } from '../../src/domain/ids.js';
import { EXAMPLE_CONFIG, EXAMPLE_ENV } from '../support/example-config.js';
import { apiKeyRows, setServiceSettingsText } from '../support/db.js';
import { describeDialects, freshStoreEach } from '../support/dialects.js';

describeDialects('applyConfig on %s', (dialect, skip) => {
  const t = freshStoreEach(dialect, skip);

  it.skipIf(skip)('creates everything, and a second apply changes nothing', async () => {
    const config = readConfigFile(EXAMPLE_CONFIG, EXAMPLE_ENV);
    const first = await applyConfig(t.store, config);
    expect(first.changes).toEqual(
      expect.arrayContaining([
        'organization acme: created',
        'service acme/smtp_main: created',
        'template acme/contact: created',
        'organization acme: suppression bounced@example.com added',
      ]),
    );
    const second = await applyConfig(t.store, readConfigFile(EXAMPLE_CONFIG, EXAMPLE_ENV));
    expect(second.changes).toEqual([]);

    const org = await t.store.organizations.get('acme');
    expect(org).toMatchObject({ plan: 'pro', credits: 1000, when_out_of_credits: 'hold', hold_queue_limit: 1000 });
    expect(org?.security.allowed_origins).toEqual(['example.com', '*.example.com']);
    expect(org?.security.block_list_watch_variable).toBe('email');
    expect(await t.store.blockList.list('acme')).toEqual(['blocked@example.com']);
    expect(await t.store.services.getDefault('acme')).toMatchObject({ id: 'smtp_main', max_per_second: 10 });
    expect((await t.store.templates.get('acme', 'contact'))?.version).toBe(1);
    expect(await t.store.suppressions.findAmong('acme', ['Bounced@Example.com'])).toEqual(['bounced@example.com']);
  });

  it.skipIf(skip)('replaces a service whose stored settings cannot be read, instead of failing on it', async () => {
    await applyConfig(t.store, readConfigFile(EXAMPLE_CONFIG, EXAMPLE_ENV));
    await setServiceSettingsText(t.store, 'acme', 'smtp_main', '{broken');
    await expect(t.store.services.get('acme', 'smtp_main')).rejects.toThrow(/corrupted JSON/);
    const again = await applyConfig(t.store, readConfigFile(EXAMPLE_CONFIG, EXAMPLE_ENV));
    expect(again.changes).toEqual(['service acme/smtp_main: updated']);
    expect(await t.store.services.get('acme', 'smtp_main')).toMatchObject({ provider: 'smtp', max_per_second: 10 });
  });

  it.skipIf(skip)('keeps given keys, storing private keys only as hashes', async () => {
    await applyConfig(t.store, readConfigFile(EXAMPLE_CONFIG, EXAMPLE_ENV));
    const priv = await t.store.keys.findByValue(EXAMPLE_ENV.ACME_PRIVATE_KEY);
    expect(priv).toMatchObject({ org_id: 'acme', type: 'private', public_key: null, status: 'active' });
    const rows = await apiKeyRows(t.store);
    expect(JSON.stringify(rows)).not.toContain(EXAMPLE_ENV.ACME_PRIVATE_KEY);
    expect(rows.map((r) => r.key_hash)).toContain(sha256(EXAMPLE_ENV.ACME_PRIVATE_KEY));
    expect(await t.store.keys.findByValue('pk_acme_public_example')).toMatchObject({
      type: 'public',
      public_key: 'pk_acme_public_example',
    });
  });

  it.skipIf(skip)('updates what changed and never resets a used balance', async () => {
    await applyConfig(t.store, readConfigFile(EXAMPLE_CONFIG, EXAMPLE_ENV));
    await t.store.organizations.update('acme', { credits: 7 }, t.clock.now());
    const edited = parseConfigText(
      `organizations:
  - id: acme
    plan: starter
    credits: 1000
    templates:
      - { id: contact, subject: "New subject", to: owner@acme.test }
`,
      'edit.yaml',
      {},
    );
    const report = await applyConfig(t.store, edited);
    expect(report.changes).toEqual(['organization acme: updated', 'template acme/contact: updated']);
    const org = await t.store.organizations.get('acme');
    expect(org?.plan).toBe('starter');
    expect(org?.credits).toBe(7);
    // Settings the file does not name keep their values.
    expect(org?.security.allowed_origins).toEqual(['example.com', '*.example.com']);
    expect((await t.store.templates.get('acme', 'contact'))?.version).toBe(2);
  });

  it.skipIf(skip)('generates a key asked for without a value, once', async () => {
    const config = parseConfigText(
      'organizations:\n  - id: gen\n    keys: [{ type: private }, { type: public }]\n',
      'gen.yaml',
      {},
    );
    const first = await applyConfig(t.store, config);
    expect(first.generatedKeys.map((k) => k.type)).toEqual(['private', 'public']);
    expect(first.generatedKeys[0]?.key).toMatch(/^sk_[A-Za-z0-9_-]{43}$/);
    const second = await applyConfig(t.store, config);
    expect(second.generatedKeys).toEqual([]);
    expect(await t.store.keys.list('gen')).toHaveLength(2);
  });

  it.skipIf(skip)('applies nothing when any part fails', async () => {
    const config = parseConfigText(
      `organizations:
  - id: first
  - id: second
    templates:
      - { id: t, service_id: missing }
`,
      'bad.yaml',
      {},
    );
    await expect(applyConfig(t.store, config)).rejects.toThrow(ConfigError);
    expect(await t.store.organizations.list()).toEqual([]);
  });

  it.skipIf(skip)('refuses a pinned key that belongs to another organization', async () => {
    await applyConfig(
      t.store,
      parseConfigText('organizations:\n  - id: a\n    keys: [{ type: public, key: pk_shared_123456 }]\n', 'a.yaml', {}),
    );
    const other = parseConfigText(
      'organizations:\n  - id: b\n    keys: [{ type: public, key: pk_shared_123456 }]\n',
      'b.yaml',
      {},
    );
    await expect(applyConfig(t.store, other)).rejects.toThrow(/another organization/);
    expect(await t.store.organizations.get('b')).toBeUndefined();
  });
});
