import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/env.js';
import type { Store } from '../storage/store.js';
import { applyConfig } from '../admin/apply.js';
import { SIMULATOR_DOMAIN } from '../testmode/simulator.js';

export interface DemoSetup {
  publicKey: string;
  privateKey: string;
  /** The test pair (issue 27): sends run the whole pipeline, but nothing leaves and no credit is used. */
  testPublicKey: string;
  testPrivateKey: string;
  /** Where the keys were also written, so a newcomer who missed the console can find them. */
  keysFile: string;
}

/** The demo's fixed inbox: what the public-key example sends to (the outbox keeps it as .eml). */
export const DEMO_INBOX = 'inbox@mailroom.local';
/** Where the test key's example sends: the simulator answers `delivered` (README "Simulator addresses"). */
export const DEMO_SIMULATOR_ADDRESS = `delivered@${SIMULATOR_DOMAIN}`;
/** The page origin the public-key example claims; any port of localhost or 127.0.0.1 is allowed. */
export const DEMO_PAGE_ORIGIN = 'http://localhost:3000';

/**
 * First run with no configuration, in development only: a demo organization with both keys and a test pair,
 * an `outbox` service (emails land as .eml files under the data directory) and two templates,
 * so the first send works within a minute of cloning:
 * - `welcome` sends to the address in its parameters, so a public key may not use it without
 *   CAPTCHA (dynamic_recipient_requires_captcha): it is the private key's example;
 * - `contact` is a contact form with a fixed recipient, which a public key may use from web
 *   pages on localhost or 127.0.0.1 (any port): EmailJS's main use.
 * Nothing happens once any organization exists, or in production.
 */
export async function ensureDemo(store: Store, config: Config): Promise<DemoSetup | undefined> {
  if (config.env !== 'development' || config.configFile !== undefined) return undefined;
  if ((await store.organizations.list()).length > 0) return undefined;
  const report = await applyConfig(
    store,
    {
      organizations: [
        {
          id: 'demo',
          name: 'Demo organization',
          plan: 'pro',
          credits: 1000,
          // Entries without a port match every port (src/domain/origin.ts): any local dev server.
          security: { allow_mobile_apps: true, allowed_origins: ['localhost', '127.0.0.1'] },
          keys: [{ type: 'public' }, { type: 'private' }, { type: 'public', mode: 'test' }, { type: 'private', mode: 'test' }],
          services: [
            { id: 'outbox', provider: 'outbox', default: true, from_email: 'demo@mailroom.local', from_name: 'mailroom demo' },
          ],
          templates: [
            {
              id: 'welcome',
              subject: 'Hello {{name}}',
              to: '{{email}}',
              from_name: 'mailroom demo',
              from_email: 'demo@mailroom.local',
              html: '<h1>Hello {{name}}</h1><p>{{message}}</p>',
              text: 'Hello {{name}}\n\n{{message}}',
              allow_dynamic_recipients: true,
              strict_params: true,
              params: [
                { name: 'name', type: 'string', required: true, max_length: 100 },
                { name: 'email', type: 'email', required: true },
                { name: 'message', type: 'string', required: true, max_length: 2000 },
              ],
            },
            {
              id: 'contact',
              subject: 'Contact form: {{name}}',
              // Fixed: a public key can send here without CAPTCHA. Reply-To may come from the
              // visitor, since the recipient does not.
              to: DEMO_INBOX,
              reply_to: '{{email}}',
              from_name: 'mailroom demo',
              from_email: 'demo@mailroom.local',
              html: '<p><b>{{name}}</b> ({{email}}) wrote:</p><p>{{message}}</p>',
              text: '{{name}} ({{email}}) wrote:\n\n{{message}}',
              strict_params: true,
              params: [
                { name: 'name', type: 'string', required: true, max_length: 100 },
                { name: 'email', type: 'email', required: true },
                { name: 'message', type: 'string', required: true, max_length: 2000 },
              ],
            },
          ],
        },
      ],
    },
    // The file's rules for webhooks (it has none); its keys are recorded as the demo's.
    undefined,
    'bootstrap',
  );
  const generated = (type: 'public' | 'private', mode: 'live' | 'test') =>
    report.generatedKeys.find((k) => k.type === type && k.mode === mode)?.key ?? '';
  const [publicKey, privateKey] = [generated('public', 'live'), generated('private', 'live')];
  const [testPublicKey, testPrivateKey] = [generated('public', 'test'), generated('private', 'test')];
  const keysFile = path.join(config.dataDir, demoKeysFileName(config.databaseUrl));
  fs.mkdirSync(config.dataDir, { recursive: true });
  // Appended, never overwritten: a file of the same name from an earlier database (dropped and
  // created again) still holds keys someone may have pasted somewhere.
  const block = [
    `# demo organization created ${new Date(store.clock.now()).toISOString()} in ${databaseLabel(config.databaseUrl)}`,
    `public key:  ${publicKey}`,
    `private key: ${privateKey}`,
    `test public key:  ${testPublicKey}`,
    `test private key: ${testPrivateKey}`,
    '',
  ].join('\n');
  fs.appendFileSync(keysFile, block, { mode: 0o600 });
  return { publicKey, privateKey, testPublicKey, testPrivateKey, keysFile };
}

const safe = (s: string): string => s.replace(/[^A-Za-z0-9_.-]/g, '_');

/**
 * One keys file per database, so starting on PostgreSQL never touches the keys of an earlier
 * SQLite run (or the other way round): `demo-keys.sqlite.txt` for the default SQLite file,
 * `demo-keys.sqlite-<file>.txt` for another one, `demo-keys.postgres-<db>[-<schema>].txt`.
 */
export function demoKeysFileName(databaseUrl: string): string {
  if (databaseUrl.startsWith('sqlite:')) {
    const file = databaseUrl.slice('sqlite:'.length);
    if (file === ':memory:') return 'demo-keys.sqlite-memory.txt';
    const base = path.basename(file).replace(/\.(db|sqlite3?)$/i, '');
    return base === 'mailroom' ? 'demo-keys.sqlite.txt' : `demo-keys.sqlite-${safe(base)}.txt`;
  }
  const url = new URL(databaseUrl);
  const db = decodeURIComponent(url.pathname.replace(/^\//, '')) || decodeURIComponent(url.username) || 'postgres';
  const schema = url.searchParams.get('schema');
  return `demo-keys.postgres-${safe(db)}${schema === null || schema === '' ? '' : `-${safe(schema)}`}.txt`;
}

/** The database, for a human, without any password the URL holds. */
function databaseLabel(databaseUrl: string): string {
  if (databaseUrl.startsWith('sqlite:')) return databaseUrl;
  const url = new URL(databaseUrl);
  url.username = '';
  url.password = '';
  return url.toString();
}

/** A request of the printed examples: what the curl lines say, in a form tests can replay. */
export interface ExampleRequest {
  url: string;
  headers: Array<[string, string]>;
  body: string;
}

export function demoExamples(
  demo: DemoSetup,
  config: Config,
): { testKey: ExampleRequest; privateKey: ExampleRequest; publicKey: ExampleRequest } {
  const url = `${config.baseUrl}/v1/send`;
  const json: [string, string] = ['Content-Type', 'application/json'];
  return {
    testKey: {
      url,
      headers: [['Authorization', `Bearer ${demo.testPrivateKey}`], json],
      body: JSON.stringify({
        template_id: 'welcome',
        template_params: { name: 'Ada', email: DEMO_SIMULATOR_ADDRESS, message: 'It works.' },
      }),
    },
    privateKey: {
      url,
      headers: [['Authorization', `Bearer ${demo.privateKey}`], json],
      body: JSON.stringify({
        template_id: 'welcome',
        template_params: { name: 'Ada', email: 'ada@example.com', message: 'It works.' },
      }),
    },
    publicKey: {
      url,
      // What a browser on a local dev server sends (EmailJS's SDK sends user_id in the body;
      // the header is mailroom's own spelling of the same key).
      headers: [['X-Mail-Public-Key', demo.publicKey], ['Origin', DEMO_PAGE_ORIGIN], json],
      body: JSON.stringify({
        template_id: 'contact',
        template_params: { name: 'Grace', email: 'grace@example.com', message: 'Sent with the public key.' },
      }),
    },
  };
}

/** `curl` over two lines; every value is single-quoted (none of them holds a quote). */
function curl(req: ExampleRequest): string[] {
  const headers = req.headers.map(([k, v]) => `-H '${k}: ${v}'`).join(' ');
  return [`  curl -s ${req.url} ${headers} \\`, `    -d '${req.body}'`];
}

export function demoInstructions(demo: DemoSetup, config: Config): string {
  const examples = demoExamples(demo, config);
  const testAuth = `-H 'Authorization: Bearer ${demo.testPrivateKey}'`;
  return [
    '',
    'First run: created the demo organization "demo".',
    `  test public key:  ${demo.testPublicKey}`,
    `  test private key: ${demo.testPrivateKey}`,
    `  public key:       ${demo.publicKey}`,
    `  private key:      ${demo.privateKey}   (shown once, all four; also in ${demo.keysFile})`,
    '',
    `Start with the test key: nothing it sends leaves this machine and no credit is used (${DEMO_SIMULATOR_ADDRESS} is`,
    'answered by the simulator as delivered):',
    ...curl(examples.testKey),
    'Then read the message and its events (MESSAGE_ID from the answer), and the copy the test inbox captured:',
    `  curl -s ${config.baseUrl}/v1/messages/MESSAGE_ID ${testAuth}`,
    `  curl -s ${config.baseUrl}/v1/test-inbox ${testAuth}`,
    '',
    'Send your first email with the private key (from a server; template "welcome" sends to the address you give):',
    ...curl(examples.privateKey),
    '',
    `Or with the public key, as a web page on localhost or 127.0.0.1 would (template "contact" always sends to ${DEMO_INBOX}):`,
    ...curl(examples.publicKey),
    '',
    `Delivered emails land as .eml files in ${path.join(config.dataDir, 'outbox')}/`,
    '',
  ].join('\n');
}
