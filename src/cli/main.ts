import { parseArgs } from 'node:util';
import { applyConfig } from '../admin/apply.js';
import { createKey, revokeKey, rotateKey } from '../admin/keys.js';
import { ConfigError, loadConfig, type Config } from '../config/env.js';
import { readConfigFile } from '../config/file.js';
import { addCredits } from '../credits/top-up.js';
import { systemClock } from '../domain/clock.js';
import { ApiError } from '../errors/api-error.js';
import { migrate, openDatabase } from '../storage/dialect.js';
import { openStore, type Store } from '../storage/store.js';
import { serve } from './serve.js';
import { runWorker } from './worker.js';

const USAGE = `mailroom: self-hosted transactional email API

Usage:
  mailroom serve                         start the HTTP API and a delivery worker (applies MAILROOM_CONFIG first)
  mailroom worker [--metrics-port N]     run a delivery worker only (N: serve /metrics and /v1/health there)
  mailroom migrate                       apply pending database migrations
  mailroom apply FILE                    apply a declarative YAML config (idempotent)
  mailroom keys list ORG                 list an organization's keys
  mailroom keys create ORG public|private
  mailroom keys rotate ORG KEY_ID        replace a key; the old one stops working
  mailroom keys revoke ORG KEY_ID
  mailroom credits add ORG AMOUNT        add credits (releases held messages)

Configuration comes from MAILROOM_* environment variables; see README.md.`;

type Out = (line: string) => void;

/** The CLI. Returns the process exit code; `out`/`err` are injectable for tests. */
export async function main(argv: string[], env = process.env, out: Out = console.log, err: Out = console.error): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv, allowPositionals: true, strict: false, options: { 'metrics-port': { type: 'string' } },
  });
  const [command, ...rest] = positionals;
  if (command === undefined || command === 'help' || argv.includes('--help') || argv.includes('-h')) {
    out(USAGE);
    return command === undefined ? 1 : 0;
  }
  let config: Config;
  try {
    // `--metrics-port N` is MAILROOM_METRICS_PORT on the command line (the flag wins), checked by the same rule.
    const metricsPort = values['metrics-port'];
    config = loadConfig(typeof metricsPort === 'string' ? { ...env, MAILROOM_METRICS_PORT: metricsPort } : env);
  } catch (e) {
    err(e instanceof ConfigError ? e.message : String(e));
    return 2;
  }
  try {
    switch (command) {
      case 'serve':
        await serve(config, out);
        return 0;
      case 'worker':
        await runWorker(config, out);
        return 0;
      case 'migrate': {
        const opened = await openDatabase(config.databaseUrl);
        try {
          const applied = await migrate(opened);
          out(applied.length === 0 ? 'Database is up to date.' : `Applied: ${applied.join(', ')}`);
        } finally {
          await opened.db.destroy();
        }
        return 0;
      }
      case 'apply':
        return await withStore(config, (store) => runApply(store, rest, env, out, err));
      case 'keys':
        return await withStore(config, (store) => runKeys(store, rest, out, err));
      case 'credits':
        return await withStore(config, (store) => runCredits(store, rest, out, err));
      default:
        err(`Unknown command "${command}".\n\n${USAGE}`);
        return 1;
    }
  } catch (e) {
    if (e instanceof ConfigError || e instanceof ApiError) {
      err(e.message);
      return 2;
    }
    throw e;
  }
}

async function withStore(config: Config, fn: (store: Store) => Promise<number>): Promise<number> {
  const store = await openStore(config.databaseUrl, { clock: systemClock });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

async function runApply(store: Store, args: string[], env: NodeJS.ProcessEnv, out: Out, err: Out): Promise<number> {
  const [file] = args;
  if (file === undefined) {
    err('Usage: mailroom apply FILE');
    return 1;
  }
  const report = await applyConfig(store, readConfigFile(file, env));
  if (report.changes.length === 0) out('No changes.');
  for (const line of report.changes) out(`  ${line}`);
  for (const k of report.generatedKeys) out(`  generated ${k.type} key for ${k.org_id}: ${k.key}`);
  return 0;
}

async function runKeys(store: Store, args: string[], out: Out, err: Out): Promise<number> {
  const [action, org, arg] = args;
  if (action === 'list' && org !== undefined) {
    for (const k of await store.keys.list(org)) out(`${k.id}  ${k.type.padEnd(7)}  ${k.status.padEnd(7)}  ${k.public_key ?? k.hint}`);
    return 0;
  }
  if (action === 'create' && org !== undefined && (arg === 'public' || arg === 'private')) {
    const issued = await createKey(store, org, arg);
    out(`${issued.key.id}  ${issued.value}`);
    return 0;
  }
  if (action === 'rotate' && org !== undefined && arg !== undefined) {
    const issued = await rotateKey(store, org, arg);
    out(`${issued.key.id}  ${issued.value}`);
    return 0;
  }
  if (action === 'revoke' && org !== undefined && arg !== undefined) {
    await revokeKey(store, org, arg);
    out(`Revoked ${arg}.`);
    return 0;
  }
  err('Usage: mailroom keys list ORG | create ORG public|private | rotate ORG KEY_ID | revoke ORG KEY_ID');
  return 1;
}

async function runCredits(store: Store, args: string[], out: Out, err: Out): Promise<number> {
  const [action, org, amount] = args;
  if (action !== 'add' || org === undefined || amount === undefined || !/^\d+$/.test(amount)) {
    err('Usage: mailroom credits add ORG AMOUNT');
    return 1;
  }
  const result = await addCredits(store, org, Number(amount));
  out(`Balance of ${org}: ${result.credits} credits; released ${result.released.length} held message(s).`);
  return 0;
}
