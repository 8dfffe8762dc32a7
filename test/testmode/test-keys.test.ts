import { describe, expect, it } from 'vitest';
import { applyConfig, generatedLines } from '../../src/admin/apply.js';
import { runKeys } from '../../src/cli/org-commands.js';
import { ConfigError } from '../../src/config/env.js';
import { parseConfigText } from '../../src/resources/config-file.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { admin } from '../support/admin.js';
import { PRIVATE_KEY, seedOrg } from '../support/seed.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Test keys (issue 27 §2): the mode is the row's, set when a key is made (admin API, config file,
 * CLI --test) and kept by a rotation; a given value of a test key must start pk_test_/sk_test_,
 * while a live key may start with anything pk_/sk_ (the seeded live keys are named sk_test_…).
 */

interface KeyBody {
  id: string;
  type: string;
  mode: string;
  hint: string;
  key: string;
}

describeDialects('test keys on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, async (app) => {
    t = app;
    await seedOrg(t.store);
  });

  it.skipIf(skip)('the admin API creates, lists and rotates a test key, which stays test', async () => {
    const res = await admin(t, 'POST', '/organizations/acme/keys', { type: 'private', mode: 'test' });
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json<KeyBody>();
    expect(created).toMatchObject({ type: 'private', mode: 'test' });
    expect(created.key).toMatch(/^sk_test_/);
    expect(created.hint).toMatch(/^sk_test_…/);
    const live = (await admin(t, 'POST', '/organizations/acme/keys', { type: 'public' })).json<KeyBody>();
    expect(live.mode).toBe('live');

    const listed = (await admin(t, 'GET', '/organizations/acme/keys')).json<{ items: KeyBody[] }>().items;
    expect(listed.map((k) => [k.type, k.mode])).toEqual(
      expect.arrayContaining([
        ['private', 'test'],
        ['public', 'live'],
      ]),
    );
    // The seeded live key named sk_test_private_0001 stays live (R1: mode from the column only).
    expect((await t.store.keys.findByValue(PRIVATE_KEY))?.mode).toBe('live');

    const rotated = await admin(t, 'POST', `/organizations/acme/keys/${created.id}/rotate`);
    expect(rotated.statusCode, rotated.body).toBe(201);
    expect(rotated.json<KeyBody>()).toMatchObject({ mode: 'test', key: expect.stringMatching(/^sk_test_/) });
    const liveRotated = await admin(t, 'POST', `/organizations/acme/keys/${live.id}/rotate`);
    expect(liveRotated.json<KeyBody>()).toMatchObject({ mode: 'live', key: expect.stringMatching(/^pk_(?!test_)/) });
  });

  it.skipIf(skip)('a given test key value must start pk_test_/sk_test_; a live one need not avoid it', async () => {
    const bad = await admin(t, 'POST', '/organizations/acme/keys', { type: 'private', mode: 'test', key: 'sk_live_0123456789' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('must start with sk_test_');
    const good = await admin(t, 'POST', '/organizations/acme/keys', { type: 'public', mode: 'test', key: 'pk_test_0123456789' });
    expect(good.json<KeyBody>()).toMatchObject({ mode: 'test' });
    const liveNamedTest = await admin(t, 'POST', '/organizations/acme/keys', { type: 'private', key: 'sk_test_live_0123456' });
    expect(liveNamedTest.json<KeyBody>()).toMatchObject({ mode: 'live' });
  });

  it.skipIf(skip)('the config file generates one key per type and mode, and never changes a pinned mode', async () => {
    const file = {
      organizations: [
        {
          id: 'acme',
          keys: [
            { type: 'public' as const },
            { type: 'private' as const },
            { type: 'public' as const, mode: 'test' as const },
            { type: 'private' as const, mode: 'test' as const },
          ],
        },
      ],
    };
    const first = await applyConfig(t.store, file);
    // acme has its live pair already: only the test pair is generated.
    expect(first.generatedKeys.map((k) => [k.type, k.mode])).toEqual([
      ['public', 'test'],
      ['private', 'test'],
    ]);
    expect(first.generatedKeys.map((k) => k.key)).toEqual([
      expect.stringMatching(/^pk_test_/),
      expect.stringMatching(/^sk_test_/),
    ]);
    expect(generatedLines(first).join('\n')).toContain('generated test private key for acme: sk_test_');
    expect((await applyConfig(t.store, file)).generatedKeys).toEqual([]);

    const pinned = {
      organizations: [{ id: 'acme', keys: [{ type: 'private' as const, key: PRIVATE_KEY, mode: 'test' as const }] }],
    };
    await expect(applyConfig(t.store, pinned)).rejects.toThrow(ConfigError);
    await expect(applyConfig(t.store, pinned)).rejects.toThrow('is a live key, the file says test');
  });

  it.skipIf(skip)('mailroom keys create ORG TYPE --test makes a test key; list shows the mode', async () => {
    const out: string[] = [];
    const err: string[] = [];
    expect(
      await runKeys(
        t.store,
        ['create', 'acme', 'public'],
        { test: true },
        (l) => out.push(l),
        (l) => err.push(l),
      ),
    ).toBe(0);
    expect(out[0]).toMatch(/ pk_test_[A-Za-z0-9_-]+$/);
    out.length = 0;
    expect(
      await runKeys(
        t.store,
        ['list', 'acme'],
        {},
        (l) => out.push(l),
        (l) => err.push(l),
      ),
    ).toBe(0);
    expect(out.filter((l) => /\bpublic\s+test\s+active\b/.test(l))).toHaveLength(1);
    expect(out.filter((l) => /\bprivate\s+live\s+active\b/.test(l))).toHaveLength(1);
    expect(
      await runKeys(
        t.store,
        ['list', 'acme'],
        { test: true },
        (l) => out.push(l),
        (l) => err.push(l),
      ),
    ).toBe(1);
    expect(err.join('\n')).toContain('--test applies to `mailroom keys create` only');
  });
});

describe('config file key modes', () => {
  const yaml = (key: string, mode: string) =>
    `organizations:\n  - id: acme\n    keys:\n      - type: private\n        key: ${key}\n        mode: ${mode}\n`;

  it('refuses a test key whose value does not start sk_test_, accepts a live key that does', () => {
    expect(() => parseConfigText(yaml('sk_live_0123456789', 'test'), 'f.yaml')).toThrow('a private key must start with sk_test_');
    expect(parseConfigText(yaml('sk_test_0123456789', 'test'), 'f.yaml').organizations[0]?.keys?.[0]?.mode).toBe('test');
    expect(parseConfigText(yaml('sk_test_0123456789', 'live'), 'f.yaml').organizations[0]?.keys?.[0]?.mode).toBe('live');
    expect(() => parseConfigText(yaml('sk_test_0123456789', 'staging'), 'f.yaml')).toThrow(ConfigError);
  });
});
