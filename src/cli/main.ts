import { parseArgs } from 'node:util';
import { applyConfig, generatedLines, webhookApplyOptions } from '../admin/apply.js';
import { ConfigError, loadConfig, type Config } from '../config/env.js';
import { systemClock } from '../domain/clock.js';
import { ApiError } from '../errors/api-error.js';
import { migrate, openDatabase } from '../storage/dialect.js';
import { openStore, type Store } from '../storage/store.js';
import { commandHelp, overview } from './help.js';
import { runCredits, runKeys } from './org-commands.js';
import { runServices } from './service-commands.js';
import { runWebhooks } from './webhook-commands.js';

type Out = (line: string) => void;

/** The CLI. Returns the process exit code; `out`/`err` are injectable for tests. */
export async function main(argv: string[], env = process.env, out: Out = console.log, err: Out = console.error): Promise<number> {
  // Options are declared so their values are not taken for positionals; unknown ones stay lenient.
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: false,
    options: {
      'metrics-port': { type: 'string' },
      'grace-seconds': { type: 'string' },
      // mailroom keys create ORG TYPE --test --name N --scope send_only
      test: { type: 'boolean' },
      name: { type: 'string' },
      scope: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      // mailroom webhooks …
      events: { type: 'string' },
      id: { type: 'string' },
      description: { type: 'string' },
      // --header "Name: value", repeatable
      header: { type: 'string', multiple: true },
      state: { type: 'string' },
      limit: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      'only-failed': { type: 'boolean' },
      'event-type': { type: 'string' },
      message: { type: 'string' },
      // mailroom services test …
      to: { type: 'string' },
    },
  });
  const [command, ...rest] = positionals;
  if (command === undefined || command === 'help' || values.help === true) {
    // `mailroom help keys rotate` and `mailroom keys rotate --help` show the same usage.
    const words = command !== 'help' ? positionals : rest.length === 0 && values.help === true ? ['help'] : rest;
    const text = words.length === 0 ? overview() : commandHelp(words);
    if (text === undefined) {
      err(`Unknown command "${words.join(' ')}".\n\n${overview()}`);
      return 1;
    }
    out(text);
    // Bare `mailroom` is a usage error that shows the list; asking for help is not.
    return argv.length === 0 ? 1 : 0;
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
        // Loaded on use: the server and worker pull in most of mailroom, which help and the
        // admin commands do not need (`mailroom --help` answers at once).
        await (await import('./serve.js')).serve(config, out);
        return 0;
      case 'worker':
        await (await import('./worker.js')).runWorker(config, out);
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
        return await withStore(config, (store) => runApply(store, config, rest, env, out, err));
      case 'keys':
        return await withStore(config, (store) =>
          runKeys(
            store,
            rest,
            {
              graceSeconds: optionString(values['grace-seconds']),
              test: values.test === true,
              name: optionString(values.name),
              scope: optionString(values.scope),
            },
            out,
            err,
          ),
        );
      case 'credits':
        return await withStore(config, (store) => runCredits(store, rest, out, err));
      case 'services':
        return await withStore(config, (store) => runServices(store, config, rest, { to: optionString(values.to) }, out, err));
      case 'webhooks':
        return await withStore(config, (store) =>
          runWebhooks(
            store,
            config,
            rest,
            {
              events: optionString(values.events),
              id: optionString(values.id),
              description: optionString(values.description),
              headers: optionStrings(values.header),
              state: optionString(values.state),
              eventType: optionString(values['event-type']),
              message: optionString(values.message),
              limit: optionString(values.limit),
              since: optionString(values.since),
              until: optionString(values.until),
              onlyFailed: values['only-failed'] === true,
              graceSeconds: optionString(values['grace-seconds']),
            },
            out,
            err,
          ),
        );
      default:
        err(`Unknown command "${command}".\n\n${overview()}`);
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

async function runApply(
  store: Store,
  config: Config,
  args: string[],
  env: NodeJS.ProcessEnv,
  out: Out,
  err: Out,
): Promise<number> {
  const [file] = args;
  if (file === undefined) {
    err(commandHelp(['apply']) ?? 'Usage: mailroom apply FILE');
    return 1;
  }
  // Loaded on use: the YAML parser is ~70 modules that only `apply` and a MAILROOM_CONFIG start read.
  const { readConfigFile } = await import('../resources/config-file.js');
  const report = await applyConfig(store, readConfigFile(file, env), webhookApplyOptions(config));
  if (report.changes.length === 0) out('No changes.');
  for (const line of report.changes) out(`  ${line}`);
  for (const line of generatedLines(report)) out(line);
  return 0;
}

/** A string option's value; a bare `--grace-seconds` (no value) reads as empty and fails its check. */
function optionString(value: string | boolean | (string | boolean)[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : '';
}

/** A repeatable string option's values, in order; a bare flag reads as empty and fails its check. */
function optionStrings(value: string | boolean | (string | boolean)[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return (Array.isArray(value) ? value : [value]).map((v) => (typeof v === 'string' ? v : ''));
}
