import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import type { Store } from '../../src/storage/store.js';
import { PRIVATE_KEY, seedOrg } from '../support/seed.js';
import { migratedDatabase, openTestStore, type TestDatabase } from '../support/stores.js';
import { describeDialects } from '../support/dialects.js';

/** `mailroom keys rename` as a user runs it: the built CLI (bin/mailroom.js → dist/) in a child process. */
const BIN = path.join(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..'), 'bin/mailroom.js');

function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
      },
    );
  });
}

describeDialects('mailroom keys rename on %s', (dialect, skip) => {
  let database!: TestDatabase;
  let dataDir!: string;
  let env!: Record<string, string>;
  let store!: Store;

  beforeEach(async () => {
    if (skip) return;
    database = await migratedDatabase(dialect);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-cli-'));
    env = { MAILROOM_DATA_DIR: dataDir, MAILROOM_DATABASE_URL: database.url, MAILROOM_LOG_LEVEL: 'silent' };
    store = await openTestStore(database.url, systemClock);
    await seedOrg(store);
  });
  afterEach(async () => {
    if (skip) return;
    await store.close();
    await database.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it.skipIf(skip)('renames a key (trimmed), prints it as keys list does, and leaves its value and scope', async () => {
    const key = await store.keys.findByValue(PRIVATE_KEY);
    const id = key?.id ?? '';
    const run = await cli(['keys', 'rename', 'acme', id, '  Billing server  '], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^${id}  private  live  active  .*"Billing server"\\n$`));
    const after = await store.keys.get('acme', id);
    expect(after).toMatchObject({ name: 'Billing server', scope: key?.scope, status: 'active' });
    expect((await store.keys.findByValue(PRIVATE_KEY))?.id).toBe(id);
    const listed = await cli(['keys', 'list', 'acme'], env);
    expect(listed.stdout).toContain('"Billing server"');
  });

  it.skipIf(skip)('refuses bad names, unknown keys and organizations, and options, changing nothing', async () => {
    const id = (await store.keys.findByValue(PRIVATE_KEY))?.id ?? '';
    const cases: Array<[string[], string]> = [
      [['keys', 'rename', 'acme', id], 'Usage:\n  mailroom keys rename ORG KEY_ID NAME'],
      [['keys', 'rename', 'acme', id, '   '], 'NAME must not be blank.'],
      [['keys', 'rename', 'acme', id, 'tab\there'], 'NAME must not contain control characters'],
      [['keys', 'rename', 'acme', id, 'x'.repeat(101)], 'NAME takes at most 100 characters.'],
      [['keys', 'rename', 'acme', id, 'Billing', 'server'], `mailroom keys rename acme ${id} "Billing server"`],
      [['keys', 'rename', 'acme', id, 'n', '--scope', 'full'], 'takes no options'],
      [['keys', 'rename', 'acme', 'key_none', 'n'], 'Key "key_none" does not exist in organization "acme".'],
      [['keys', 'rename', 'nonexistent', id, 'n'], 'Organization "nonexistent" does not exist.'],
    ];
    const runs = await Promise.all(cases.map(([args]) => cli(args, env)));
    runs.forEach((run, i) => {
      const [args, message] = cases[i] ?? [[], ''];
      expect(run.code, args.join(' ')).not.toBe(0);
      expect(run.stderr, args.join(' ')).toContain(message);
      expect(run.stdout).toBe('');
    });
    expect((await store.keys.get('acme', id))?.name).toBeNull();
    const help = await cli(['keys', 'rename', '--help'], env);
    expect(help.stdout).toContain('mailroom keys rename ORG KEY_ID NAME');
    expect(help.stdout).toContain('quote a name with spaces');
  });
});
