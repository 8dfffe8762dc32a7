import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { demoInstructions, demoKeysFileName, ensureDemo, DEMO_INBOX } from '../../src/bootstrap/demo.js';
import type { App } from '../../src/http/app-types.js';
import { buildTestApp, testConfig } from '../support/app.js';
import { freshStore, PG_URL, postgresAvailable, type TestStore } from '../support/stores.js';
import { describeDialects } from '../support/dialects.js';

const pgUp = await postgresAvailable();

/**
 * Issue 11, section 7: the first run's public key could not send (the only demo template took
 * its recipient from the parameters, so every public-key send was refused for want of a
 * CAPTCHA), and a PostgreSQL start overwrote the keys file of an earlier SQLite run.
 */

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-demo-'));
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function store(dialect: 'sqlite' | 'postgres'): Promise<TestStore> {
  const ts = await freshStore(dialect);
  cleanups.push(ts.cleanup);
  return ts;
}

/** What a shell makes of one printed `curl` command: URL, headers and body, in order. */
interface Curl {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** The curl commands of the printed instructions (a command continues after a trailing `\`). */
function curlCommands(text: string): Curl[] {
  const commands = text
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('curl '));
  return commands.map((line) => {
    const url = /^curl -s (\S+)/.exec(line)?.[1] ?? '';
    const headers: Record<string, string> = {};
    for (const [, h = ''] of line.matchAll(/-H '([^']*)'/g)) {
      const i = h.indexOf(':');
      headers[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim();
    }
    const body = /-d '([^']*)'/.exec(line)?.[1] ?? '';
    return { url, headers, body };
  });
}

async function replay(app: App, c: Curl, messageId = '') {
  // The printed base URL is the configured one; the app answers the same path whatever its host.
  const url = new URL(c.url).pathname.replace('MESSAGE_ID', messageId);
  if (c.body === '') return app.inject({ method: 'GET', url, headers: c.headers });
  return app.inject({ method: 'POST', url, headers: c.headers, payload: c.body });
}

describeDialects('first-run demo on %s', (dialect, skip) => {
  it.skipIf(skip)('prints a private-key and a public-key curl command, and both are accepted exactly as printed', async () => {
    const ts = await store(dialect);
    const dir = tempDir();
    const config = testConfig({ MAILROOM_DATA_DIR: dir, MAILROOM_DATABASE_URL: ts.database.url });
    const demo = await ensureDemo(ts.store, config);
    expect(demo).toBeDefined();
    if (demo === undefined) return;
    const text = demoInstructions(demo, config);
    const app = await buildTestApp(config, { store: ts.store, clock: ts.clock });
    cleanups.push(async () => {
      await app.close();
    });

    const commands = curlCommands(text);
    expect(commands).toHaveLength(5);
    const [testCmd, readCmd, inboxCmd, privateCmd, publicCmd] = commands as [Curl, Curl, Curl, Curl, Curl];
    // Issue 27: the first example is the test key's, to the simulator, then its reads.
    expect(text.indexOf(demo.testPrivateKey)).toBeLessThan(text.indexOf(demo.privateKey));
    expect(demo.testPrivateKey).toMatch(/^sk_test_/);
    expect(demo.testPublicKey).toMatch(/^pk_test_/);
    for (const c of [testCmd, readCmd, inboxCmd]) expect(c.headers.authorization).toBe(`Bearer ${demo.testPrivateKey}`);
    expect(new URL(inboxCmd.url).pathname).toBe('/v1/test-inbox');
    const test = await replay(app, testCmd);
    expect(test.statusCode, test.body).toBe(202);
    const testId = test.json<{ message_id: string }>().message_id;
    expect(await ts.store.messages.get('demo', testId)).toMatchObject({ mode: 'test', simulated: true, credit_taken: false });
    const read = await replay(app, readCmd, testId);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json<{ mode: string }>().mode).toBe('test');
    const inbox = await replay(app, inboxCmd);
    expect(inbox.statusCode, inbox.body).toBe(200);
    expect((await ts.store.organizations.get('demo'))?.credits).toBe(1000);

    expect(privateCmd.headers.authorization).toBe(`Bearer ${demo.privateKey}`);
    expect(publicCmd.headers['x-mail-public-key']).toBe(demo.publicKey);
    expect(publicCmd.headers.authorization).toBeUndefined();
    expect(publicCmd.headers.origin).toMatch(/^http:\/\/localhost:\d+$/);

    const pub = await replay(app, publicCmd);
    expect(pub.statusCode, pub.body).toBe(202);
    const priv = await replay(app, privateCmd);
    expect(priv.statusCode, priv.body).toBe(202);

    // The public-key send went to the fixed inbox.
    const id = pub.json<{ message_id: string }>().message_id;
    expect((await ts.store.messages.toAddresses([id])).get(id)).toEqual([DEMO_INBOX]);
  });

  it.skipIf(skip)('the public key works from any local dev-server port, and not from another site', async () => {
    const ts = await store(dialect);
    const config = testConfig({ MAILROOM_DATA_DIR: tempDir(), MAILROOM_DATABASE_URL: ts.database.url });
    const demo = await ensureDemo(ts.store, config);
    if (demo === undefined) throw new Error('no demo');
    const app = await buildTestApp(config, { store: ts.store, clock: ts.clock });
    cleanups.push(async () => {
      await app.close();
    });
    const publicCmd = curlCommands(demoInstructions(demo, config)).at(-1) as Curl;

    for (const origin of ['http://localhost:5173', 'http://127.0.0.1:8000', 'http://localhost']) {
      const res = await replay(app, { ...publicCmd, headers: { ...publicCmd.headers, origin } });
      expect(res.statusCode, `${origin} ${res.body}`).toBe(202);
    }
    const foreign = await replay(app, { ...publicCmd, headers: { ...publicCmd.headers, origin: 'https://evil.example' } });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json<{ error: { code: string } }>().error.code).toBe('origin_not_allowed');
    // The private key's template still sends to the address in its parameters, so a public
    // key may not use it without CAPTCHA: that is why the demo has the second template.
    const welcome = await replay(app, {
      ...publicCmd,
      body: JSON.stringify({ template_id: 'welcome', template_params: { name: 'A', email: 'a@example.com', message: 'm' } }),
    });
    expect(welcome.json<{ error: { code: string } }>().error.code).toBe('dynamic_recipient_requires_captcha');
  });
});

describe('demo keys file, one per database', () => {
  it('is named after the database', () => {
    expect(demoKeysFileName('sqlite:/srv/mailroom/data/mailroom.db')).toBe('demo-keys.sqlite.txt');
    expect(demoKeysFileName('sqlite:/srv/other.db')).toBe('demo-keys.sqlite-other.txt');
    expect(demoKeysFileName('sqlite::memory:')).toBe('demo-keys.sqlite-memory.txt');
    expect(demoKeysFileName('postgres://app:secret@db.internal:5432/mailroom')).toBe('demo-keys.postgres-mailroom.txt');
    expect(demoKeysFileName('postgresql://app@localhost/mail%20room?schema=staging')).toBe(
      'demo-keys.postgres-mail_room-staging.txt',
    );
    expect(demoKeysFileName('postgres://app@localhost')).toBe('demo-keys.postgres-app.txt');
  });

  it.skipIf(!pgUp)(
    'a PostgreSQL start after a SQLite run in the same data directory leaves the SQLite keys file alone',
    async () => {
      const dir = tempDir();
      const lite = await store('sqlite');
      const pg = await store('postgres');
      // The SQLite run uses the default file name, as `mailroom serve` with no database URL does.
      const liteDemo = await ensureDemo(lite.store, testConfig({ MAILROOM_DATA_DIR: dir }));
      const liteFile = path.join(dir, 'demo-keys.sqlite.txt');
      expect(liteDemo?.keysFile).toBe(liteFile);
      const liteText = fs.readFileSync(liteFile, 'utf8');
      expect(liteText).toContain(`private key: ${liteDemo?.privateKey}`);
      expect(liteText).toContain(`test private key: ${liteDemo?.testPrivateKey}`);
      expect(liteText).toContain(`test public key:  ${liteDemo?.testPublicKey}`);

      // A password in the URL must not reach the file (trust auth ignores it).
      const schema = new URL(pg.database.url).searchParams.get('schema') ?? '';
      const pgUrl = `${PG_URL.replace('postgres@', 'postgres:hunter2@')}?schema=${schema}`;
      const pgDemo = await ensureDemo(pg.store, testConfig({ MAILROOM_DATA_DIR: dir, MAILROOM_DATABASE_URL: pgUrl }));
      expect(pgDemo?.keysFile).not.toBe(liteFile);
      expect(path.basename(pgDemo?.keysFile ?? '')).toMatch(/^demo-keys\.postgres-test-t_[a-z0-9]+\.txt$/);
      const pgText = fs.readFileSync(pgDemo?.keysFile ?? '', 'utf8');
      expect(pgText).toContain(`private key: ${pgDemo?.privateKey}`);
      expect(pgText).not.toContain('hunter2');
      expect(fs.readFileSync(liteFile, 'utf8')).toBe(liteText);
      expect((fs.statSync(liteFile).mode & 0o777).toString(8)).toBe('600');
    },
  );

  it('a second demo in a database of the same name adds its keys below the first, never over them', async () => {
    const dir = tempDir();
    const first = await ensureDemo((await store('sqlite')).store, testConfig({ MAILROOM_DATA_DIR: dir }));
    // The database was deleted and the server started again: same file name, new keys.
    const second = await ensureDemo((await store('sqlite')).store, testConfig({ MAILROOM_DATA_DIR: dir }));
    expect(second?.keysFile).toBe(first?.keysFile);
    const text = fs.readFileSync(second?.keysFile ?? '', 'utf8');
    expect(text.indexOf(`private key: ${first?.privateKey}`)).toBeGreaterThanOrEqual(0);
    expect(text.indexOf(`private key: ${second?.privateKey}`)).toBeGreaterThan(text.indexOf(`private key: ${first?.privateKey}`));
    expect(text.match(/^# demo organization created /gm)).toHaveLength(2);
  });
});
