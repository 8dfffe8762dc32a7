import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { serviceFields } from '../../src/resources/normalize.js';
import type { ServiceInput } from '../../src/resources/inputs.js';
import { systemClock } from '../../src/domain/clock.js';
import type { Store } from '../../src/storage/store.js';
import { Closer } from '../support/cleanup.js';
import { seedOrg } from '../support/seed.js';
import { freePort, startSink } from '../support/smtp-sink.js';
import { freshDatabase, openTestStore, type TestDatabase } from '../support/stores.js';
import { describeDialects } from '../support/dialects.js';

/** The built CLI (bin/mailroom.js → dist/: `npm run build` first) as a user runs it. */
const BIN = path.join(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..'), 'bin/mailroom.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string>): Promise<Run> {
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

describeDialects('mailroom services test on %s', (dialect, skip) => {
  let database!: TestDatabase;
  let dataDir!: string;
  let env!: Record<string, string>;
  let store!: Store;
  const closer = new Closer();

  beforeEach(async () => {
    if (skip) return;
    database = await freshDatabase(dialect);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-cli-'));
    env = { MAILROOM_DATA_DIR: dataDir, MAILROOM_DATABASE_URL: database.url, MAILROOM_LOG_LEVEL: 'silent' };
    store = await openTestStore(database.url, systemClock);
    await seedOrg(store);
  });
  afterEach(async () => {
    await closer.closeAll();
    if (skip) return;
    await store.close();
    await database.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const putSmtp = (id: string, port: number, pass: string) => {
    const input: ServiceInput = {
      provider: 'smtp',
      from_email: 'noreply@example.com',
      smtp: { host: '127.0.0.1', port, user: 'mailer', pass },
    };
    return store.services.put('acme', id, serviceFields(input), systemClock.now());
  };

  it.skipIf(skip)('passes, fails with the reason (exit 3), sends with --to, and refuses bad usage', async () => {
    const sink = await startSink({ auth: { user: 'mailer', pass: 's3cret' } }, closer);
    await putSmtp('relay', sink.port, 's3cret');
    await putSmtp('wrong', sink.port, 'nope');
    await putSmtp('down', await freePort(), 's3cret');

    const ok = await cli(['services', 'test', 'acme', 'relay'], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^ok: service acme\/relay accepted the credentials in \d+ ms$/m);
    expect(sink.received).toHaveLength(0);

    const auth = await cli(['services', 'test', 'acme', 'wrong'], env);
    expect(auth.code).toBe(3);
    expect(auth.stderr).toMatch(/^failed \(auth, at verify\): .*535/m);
    const down = await cli(['services', 'test', 'acme', 'down'], env);
    expect(down.code).toBe(3);
    expect(down.stderr).toMatch(/^failed \(connect, at verify\): .*ECONNREFUSED/m);

    const sent = await cli(['services', 'test', 'acme', 'relay', '--to', 'ops@example.org'], env);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toContain('sent a test message to ops@example.org');
    expect(sent.stdout).toMatch(/response: +250/);
    expect(sink.received.map((r) => r.rcptTo)).toEqual([['ops@example.org']]);
    expect((await sink.parse(0)).subject).toBe('mailroom service test');

    const unknown = await cli(['services', 'test', 'acme', 'nope'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Service "nope" does not exist in organization "acme"');
    expect((await cli(['services', 'test', 'nobody', 'relay'], env)).code).toBe(2);
    const usage = await cli(['services', 'test', 'acme'], env);
    expect(usage.code).toBe(1);
    expect(usage.stderr).toContain('mailroom services test ORG ID [--to ADDRESS]');
    expect((await cli(['services', 'test', 'acme', 'relay', '--to', 'not-an-address'], env)).code).toBe(2);
  });
});
