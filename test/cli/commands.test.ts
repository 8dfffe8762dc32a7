import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/help.js';
import { systemClock } from '../../src/domain/clock.js';
import type { Store } from '../../src/storage/store.js';
import { insertMessage } from '../support/db.js';
import { PRIVATE_KEY, seedOrg } from '../support/seed.js';
import { migratedDatabase, openTestStore, type TestDatabase } from '../support/stores.js';
import { describeDialects } from '../support/dialects.js';

/**
 * The built CLI (bin/mailroom.js → dist/, as `npm test` builds it) as a user runs it: a child
 * process, its stdout, stderr and exit code.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin/mailroom.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('mailroom help', () => {
  it('--help, help and no arguments list every command with its one-line description', async () => {
    const runs = await Promise.all([cli(['--help']), cli(['help']), cli([]), cli(['-h'])]);
    for (const run of runs) {
      for (const c of COMMANDS) {
        expect(run.stdout).toMatch(new RegExp(`^  ${c.name} +${escapeRegExp(c.summary)}$`, 'm'));
      }
      expect(run.stdout).toContain('npm link');
      expect(run.stdout).toContain('npx mailroom');
    }
    expect(runs.map((r) => r.code)).toEqual([0, 0, 1, 0]);
    // README's list of commands is the same text.
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    for (const c of COMMANDS.filter((x) => x.name !== 'help'))
      expect(readme, c.name).toMatch(new RegExp(`^${c.name} +${escapeRegExp(c.summary)}$`, 'm'));
    // The list names the commands the CLI really has.
    expect(COMMANDS.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        'serve',
        'worker',
        'migrate',
        'apply',
        'keys list',
        'keys create',
        'keys rotate',
        'keys rename',
        'keys revoke',
        'credits show',
        'credits add',
        'help',
      ]),
    );
  });

  it("each command's --help (and `help COMMAND`) shows its usage without touching a database", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-help-'));
    try {
      const runs = await Promise.all(COMMANDS.map((c) => cli([...c.name.split(' '), '--help'], { MAILROOM_DATA_DIR: dir })));
      COMMANDS.forEach((c, i) => {
        expect(runs[i]?.code, c.name).toBe(0);
        expect(runs[i]?.stdout.split('\n')[0], c.name).toBe(`Usage: ${c.usage}`);
      });
      const rotate = await cli(['help', 'keys', 'rotate'], { MAILROOM_DATA_DIR: dir });
      expect(rotate.stdout).toBe(runs[COMMANDS.findIndex((c) => c.name === 'keys rotate')]?.stdout);
      expect(rotate.stdout).toContain('--grace-seconds N');
      const group = await cli(['keys', '--help'], { MAILROOM_DATA_DIR: dir });
      for (const c of COMMANDS.filter((x) => x.name.startsWith('keys '))) expect(group.stdout).toContain(c.usage);
      expect(fs.readdirSync(dir)).toEqual([]);
      const unknown = await cli(['help', 'frobnicate'], { MAILROOM_DATA_DIR: dir });
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('Unknown command "frobnicate"');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('npx mailroom from the checkout', () => {
  it("runs this checkout's own build, offline, with an empty npm cache (what the README tells a newcomer)", async () => {
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-npx-'));
    try {
      const run = await new Promise<Run>((resolve) => {
        // --offline: npm must not fetch a "mailroom" from the registry; the package's own bin serves.
        execFile(
          'npx',
          ['--offline', 'mailroom', '--help'],
          {
            cwd: ROOT,
            env: { PATH: process.env.PATH ?? '', HOME: cache, NPM_CONFIG_CACHE: cache, NPM_CONFIG_UPDATE_NOTIFIER: 'false' },
            timeout: 60_000,
          },
          (error, stdout, stderr) =>
            resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr }),
        );
      });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      for (const c of COMMANDS) expect(run.stdout).toMatch(new RegExp(`^  ${c.name} +${escapeRegExp(c.summary)}$`, 'm'));
    } finally {
      fs.rmSync(cache, { recursive: true, force: true });
    }
  }, 120_000); // npm's own start-up (arborist reading the tree) took over 30 s on a loaded 2-core machine
});

describeDialects('mailroom keys and credits on %s', (dialect, skip) => {
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

  it.skipIf(skip)(
    'every command that takes an organization says when it does not exist, on stderr, and exits non-zero',
    async () => {
      const keyId = (await store.keys.findByValue(PRIVATE_KEY))?.id ?? '';
      const commands = [
        ['keys', 'list', 'nonexistent'],
        ['keys', 'create', 'nonexistent', 'public'],
        ['keys', 'rotate', 'nonexistent', keyId],
        ['keys', 'rotate', 'nonexistent', keyId, '--grace-seconds', '60'],
        ['keys', 'revoke', 'nonexistent', keyId],
        ['credits', 'show', 'nonexistent'],
        ['credits', 'add', 'nonexistent', '5'],
      ];
      const runs = await Promise.all(commands.map((c) => cli(c, env)));
      runs.forEach((run, i) => {
        const what = commands[i]?.join(' ');
        expect(run.code, what).not.toBe(0);
        expect(run.stderr, what).toContain('Organization "nonexistent" does not exist.');
        expect(run.stdout, what).toBe('');
      });
      // Nothing was done to the organization that does exist.
      expect((await store.keys.get('acme', keyId))?.status).toBe('active');
    },
  );

  it.skipIf(skip)('credits show prints the balance, overdraft, mode and held messages; add changes them', async () => {
    await store.organizations.update('acme', { credits: 0, overdraft: 5 }, systemClock.now());
    await insertMessage(store, 'acme', 'msg_held_1', 'held', 1000, false);
    await insertMessage(store, 'acme', 'msg_held_2', 'held', 2000, false);

    const shown = await cli(['credits', 'show', 'acme'], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^Organization acme$/m);
    expect(shown.stdout).toMatch(/balance: +0 credits$/m);
    expect(shown.stdout).toMatch(/overdraft: +5 \(private keys only\)$/m);
    expect(shown.stdout).toMatch(/when out of credits: +hold \(up to \d+ held\)$/m);
    expect(shown.stdout).toMatch(/held messages: +2$/m);

    expect((await cli(['credits', 'add', 'acme', '1'], env)).stdout).toContain('released 1 held message(s)');
    const after = await cli(['credits', 'show', 'acme'], env);
    expect(after.stdout).toMatch(/balance: +0 credits$/m);
    expect(after.stdout).toMatch(/held messages: +1$/m);

    for (const bad of [
      ['credits', 'show'],
      ['credits', 'show', 'acme', 'extra'],
      ['credits', 'add', 'acme', 'ten'],
      ['credits'],
    ]) {
      const run = await cli(bad, env);
      expect(run.code, bad.join(' ')).toBe(1);
      expect(run.stderr).toContain('mailroom credits show ORG');
    }
  });

  it.skipIf(skip)('keys rotate --grace-seconds keeps the old key working for that long, and says until when', async () => {
    const old = (await store.keys.findByValue(PRIVATE_KEY))?.id ?? '';
    const rotated = await cli(['keys', 'rotate', 'acme', old, '--grace-seconds', '90'], env);
    expect(rotated.code, rotated.stderr).toBe(0);
    const [first, second] = rotated.stdout.trim().split('\n');
    expect(first).toMatch(/^key_\S+ {2}sk_\S+$/);
    expect(second).toMatch(new RegExp(`^The old key ${old} keeps working until \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\.$`));

    const row = await store.keys.get('acme', old);
    expect(row?.status).toBe('rotated');
    expect((row?.expires_at ?? 0) - (row?.revoked_at ?? 0)).toBe(90_000);

    const listed = await cli(['keys', 'list', 'acme'], env);
    expect(listed.stdout).toMatch(new RegExp(`^${old} +private +live +rotated +sk_…\\S+ +works until \\S+Z$`, 'm'));

    // Without the option the old key stops at once, as before.
    const newId = first?.split(/\s+/)[0] ?? '';
    const cut = await cli(['keys', 'rotate', 'acme', newId], env);
    expect(cut.stdout).toContain(`The old key ${newId} stopped working now.`);
    const cutRow = await store.keys.get('acme', newId);
    expect(cutRow?.expires_at).toBe(cutRow?.revoked_at);

    for (const bad of [['--grace-seconds', 'soon'], ['--grace-seconds', '-5'], ['--grace-seconds']]) {
      const run = await cli(['keys', 'rotate', 'acme', 'key_x', ...bad], env);
      expect(run.code, bad.join(' ')).toBe(1);
      expect(run.stderr).toContain('--grace-seconds');
    }
    const tooLong = await cli(
      [
        'keys',
        'rotate',
        'acme',
        (await store.keys.list('acme')).find((k) => k.status === 'active' && k.type === 'private')?.id ?? '',
        '--grace-seconds',
        '2592001',
      ],
      env,
    );
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toContain('grace_seconds must be a whole number of seconds from 0 to 2592000');
    expect((await cli(['keys', 'list', 'acme', '--grace-seconds', '5'], env)).code).toBe(1);
  });
});
