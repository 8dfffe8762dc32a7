import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/env.js';
import type { Store } from '../storage/store.js';
import { applyConfig } from '../admin/apply.js';

export interface DemoSetup {
  publicKey: string;
  privateKey: string;
  /** Where the keys were also written, so a newcomer who missed the console can find them. */
  keysFile: string;
}

/**
 * First run with no configuration, in development only: a demo organization with both keys,
 * an `outbox` service (emails land as .eml files under the data directory) and a template,
 * so the first send works within a minute of cloning. Nothing happens once any organization
 * exists, or in production.
 */
export async function ensureDemo(store: Store, config: Config): Promise<DemoSetup | undefined> {
  if (config.env !== 'development' || config.configFile !== undefined) return undefined;
  if ((await store.organizations.list()).length > 0) return undefined;
  const report = await applyConfig(store, {
    organizations: [{
      id: 'demo',
      name: 'Demo organization',
      plan: 'pro',
      credits: 1000,
      security: { allow_mobile_apps: true, allowed_origins: ['localhost', '127.0.0.1'] },
      keys: [{ type: 'public' }, { type: 'private' }],
      services: [{ id: 'outbox', provider: 'outbox', default: true, from_email: 'demo@mailroom.local', from_name: 'mailroom demo' }],
      templates: [{
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
      }],
    }],
  });
  const publicKey = report.generatedKeys.find((k) => k.type === 'public')?.key ?? '';
  const privateKey = report.generatedKeys.find((k) => k.type === 'private')?.key ?? '';
  const keysFile = path.join(config.dataDir, 'demo-keys.txt');
  fs.mkdirSync(config.dataDir, { recursive: true });
  fs.writeFileSync(keysFile, `public key:  ${publicKey}\nprivate key: ${privateKey}\n`, { mode: 0o600 });
  return { publicKey, privateKey, keysFile };
}

export function demoInstructions(demo: DemoSetup, config: Config): string {
  const body = JSON.stringify({ template_id: 'welcome', template_params: { name: 'Ada', email: 'ada@example.com', message: 'It works.' } });
  return [
    '',
    'First run: created the demo organization "demo".',
    `  public key:  ${demo.publicKey}`,
    `  private key: ${demo.privateKey}   (shown once; also in ${demo.keysFile})`,
    '',
    'Send your first email:',
    `  curl -s ${config.baseUrl}/v1/send -H 'Authorization: Bearer ${demo.privateKey}' \\`,
    `    -H 'Content-Type: application/json' -d '${body}'`,
    `Delivered emails land as .eml files in ${path.join(config.dataDir, 'outbox')}/`,
    '',
  ].join('\n');
}
