import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import YAML from 'yaml';

/**
 * The organizations of issue 16's send goals: 300 of them, so caches see a realistic working
 * set, each with its own private key, the loopback SMTP sink as its default service and the
 * five-parameter template. Plan business_200k has the highest per-second limit (50 requests a
 * second per organization and per key, src/protection/rate-limits.ts); spread round-robin over
 * 300 organizations that allows 15,000 sends a second, far above any rate reached here, so no
 * plan limit caps a run. Credits: 100 million each, never the limit either.
 */
export const ORGANIZATIONS = 300;

/** The body of every send: template `bench` with its five parameters. */
export const SEND_BODY = JSON.stringify({
  template_id: 'bench',
  template_params: {
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    company: 'Analytical Engines',
    plan: 'pro',
    message: 'The engine is ready. '.repeat(8),
  },
});

/** The five-parameter template every bench sends (SEND_BODY's parameters), as the declarative file writes it. */
export function benchTemplate(id: string, subject: string, fromEmail: string) {
  return {
    id,
    subject,
    to: '{{email}}',
    from_email: fromEmail,
    html: '<p>Dear {{name}},</p><p>{{message}}</p><p>Plan: {{plan}}</p>',
    text: '{{message}}',
    allow_dynamic_recipients: true,
    strict_params: true,
    params: [
      { name: 'name', type: 'string', required: true, max_length: 100 },
      { name: 'email', type: 'email', required: true },
      { name: 'company', type: 'string' },
      { name: 'plan', type: 'string', enum: ['free', 'pro'] },
      { name: 'message', type: 'string', required: true },
    ],
  };
}

export function orgId(i: number): string {
  return `bench${String(i).padStart(3, '0')}`;
}

export function privateKey(i: number): string {
  return `sk_bench_${String(i).padStart(3, '0')}_private_key_0000000000`;
}

export function benchKeys(count = ORGANIZATIONS): string[] {
  return Array.from({ length: count }, (_, i) => privateKey(i));
}

/** The declarative file (README "Declarative file") for `count` organizations delivering to `smtpPort`. */
export function benchOrgsYaml(smtpPort: number, count = ORGANIZATIONS): string {
  const organizations = Array.from({ length: count }, (_, i) => ({
    id: orgId(i),
    plan: 'business_200k',
    credits: 100_000_000,
    keys: [{ type: 'private', key: privateKey(i) }],
    services: [{ id: 'sink', provider: 'smtp', default: true, smtp: { host: '127.0.0.1', port: smtpPort } }],
    templates: [benchTemplate('bench', 'Hello {{name}} from {{company}}', 'bench@mailroom.test')],
  }));
  return YAML.stringify({ organizations });
}

/** bin/mailroom.js, from dist/bench/ where this file runs. */
export const MAILROOM_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/mailroom.js');

/**
 * A data directory holding the 300 organizations, made as a user would: `mailroom apply FILE`
 * with MAILROOM_DATA_DIR set. Each server of the benchmark starts from a copy of it
 * (`copyDataDir`), so every one starts with the same organizations and an empty queue.
 */
export async function applyBenchOrgs(dataDir: string, smtpPort: number): Promise<void> {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, '..', `${path.basename(dataDir)}-orgs.yaml`);
  fs.writeFileSync(file, benchOrgsYaml(smtpPort));
  await promisify(execFile)(process.execPath, [MAILROOM_BIN, 'apply', file], {
    env: { ...process.env, MAILROOM_DATA_DIR: dataDir, MAILROOM_LOG_LEVEL: 'warn' },
    maxBuffer: 16 * 1024 * 1024,
  });
  fs.rmSync(file);
}

export function copyDataDir(from: string, to: string): void {
  fs.cpSync(from, to, { recursive: true });
}
