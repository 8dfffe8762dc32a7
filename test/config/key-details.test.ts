import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/apply.js';
import { main } from '../../src/cli/main.js';
import { systemClock } from '../../src/domain/clock.js';
import { parseConfigText } from '../../src/resources/config-file.js';
import { openStore } from '../../src/storage/store.js';
import { describeDialects, freshStoreEach } from '../support/dialects.js';

/**
 * Issue 29 in the YAML file and the CLI: keys take `name` and `scope` as the admin API does
 * (send_only for private keys only, names trimmed, 1–100 characters), and record who made them:
 * `config` for the file, `bootstrap` for the demo, `cli` for `mailroom keys create`.
 */
const yaml = (keys: string) => `organizations:\n  - id: acme\n    keys: ${keys}\n`;

describeDialects('key details in the YAML file on %s', (dialect, skip) => {
  const t = freshStoreEach(dialect, skip);

  it.skipIf(skip)('name and scope are stored; created_by config; a second apply changes nothing', async () => {
    const file = parseConfigText(
      yaml(
        '[{ type: private, name: " Web app ", scope: send_only }, { type: private, name: Reporting },' +
          ' { type: public, key: pk_acme_pinned_0001, name: Site }]',
      ),
      'k.yaml',
      {},
    );
    const first = await applyConfig(t.store, file);
    expect(first.generatedKeys).toHaveLength(2);
    const keys = await t.store.keys.list('acme');
    const summary = keys.map((k) => [k.type, k.name, k.scope, k.created_by]);
    expect(summary).toEqual(
      expect.arrayContaining([
        ['private', 'Web app', 'send_only', 'config'],
        ['private', 'Reporting', 'full', 'config'],
        ['public', 'Site', 'full', 'config'],
      ]),
    );
    const second = await applyConfig(t.store, file);
    expect(second.changes).toEqual([]);
    expect(second.generatedKeys).toEqual([]);
  });

  it.skipIf(skip)('a pinned key takes a new name or scope from the file; left out, a rename elsewhere stays', async () => {
    await applyConfig(t.store, parseConfigText(yaml('[{ type: private, key: sk_acme_pinned_0002 }]'), 'k.yaml', {}));
    const key = (await t.store.keys.findByValue('sk_acme_pinned_0002'))?.id ?? '';
    await t.store.keys.update('acme', key, { name: 'Renamed in the UI' });
    const same = await applyConfig(t.store, parseConfigText(yaml('[{ type: private, key: sk_acme_pinned_0002 }]'), 'k.yaml', {}));
    expect(same.changes).toEqual([]);
    expect((await t.store.keys.get('acme', key))?.name).toBe('Renamed in the UI');
    const changed = await applyConfig(
      t.store,
      parseConfigText(yaml('[{ type: private, key: sk_acme_pinned_0002, name: Billing, scope: send_only }]'), 'k.yaml', {}),
    );
    expect(changed.changes).toEqual([expect.stringMatching(/key sk_….* name and scope updated$/)]);
    expect(await t.store.keys.get('acme', key)).toMatchObject({ name: 'Billing', scope: 'send_only' });
  });

  it('the file is refused: a public send_only key, a blank name, a long one, an unknown scope', () => {
    const problem = (keys: string) => () => parseConfigText(yaml(keys), 'k.yaml', {});
    expect(problem('[{ type: public, scope: send_only }]')).toThrow(
      /organizations\/0\/keys\/0\/scope: send_only is for private keys/,
    );
    expect(problem('[{ type: private, name: "  " }]')).toThrow(/organizations\/0\/keys\/0\/name: must not be blank/);
    expect(problem(`[{ type: private, name: ${'x'.repeat(101)} }]`)).toThrow(/keys\/0\/name/);
    expect(problem('[{ type: private, scope: read_only }]')).toThrow(/keys\/0\/scope/);
  });
});

describe('mailroom keys create --name --scope', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  async function run(argv: string[], env: Record<string, string>) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(
      argv,
      env,
      (l) => out.push(l),
      (l) => err.push(l),
    );
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  it('creates a named send_only key recorded as made by cli; list shows both; bad options exit 1', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-keys-'));
    dirs.push(dir);
    const env = { MAILROOM_DATA_DIR: dir };
    const file = path.join(dir, 'org.yaml');
    fs.writeFileSync(file, 'organizations:\n  - id: acme\n');
    expect((await run(['apply', file], env)).code).toBe(0);

    const created = await run(['keys', 'create', 'acme', 'private', '--name', 'Nightly job', '--scope', 'send_only'], env);
    expect(created.code, created.err).toBe(0);
    const [keyId, value] = created.out.split(/\s+/);
    expect(value).toMatch(/^sk_/);
    const listed = await run(['keys', 'list', 'acme'], env);
    expect(listed.out).toMatch(new RegExp(`^${keyId} .*send_only {2}"Nightly job"$`, 'm'));

    // Rotated by the CLI: name and scope kept, made by cli.
    const rotated = await run(['keys', 'rotate', 'acme', keyId ?? ''], env);
    expect(rotated.code, rotated.err).toBe(0);

    const bad = [
      ['keys', 'create', 'acme', 'public', '--scope', 'send_only'],
      ['keys', 'create', 'acme', 'private', '--scope', 'everything'],
      ['keys', 'create', 'acme', 'private', '--name', '   '],
      ['keys', 'create', 'acme', 'private', '--name', 'x'.repeat(101)],
      ['keys', 'list', 'acme', '--name', 'x'],
    ];
    for (const argv of bad) {
      const res = await run(argv, env);
      expect(res.code, argv.join(' ')).toBe(1);
      expect(res.err, argv.join(' ')).toMatch(/--(name|scope)/);
    }

    const store = await openStore(`sqlite:${path.join(dir, 'mailroom.db')}`, { clock: systemClock });
    try {
      const keys = await store.keys.list('acme');
      expect(keys.map((k) => [k.name, k.scope, k.created_by, k.status])).toEqual([
        ['Nightly job', 'send_only', 'cli', 'rotated'],
        ['Nightly job', 'send_only', 'cli', 'active'],
      ]);
    } finally {
      await store.close();
    }
  });
});
