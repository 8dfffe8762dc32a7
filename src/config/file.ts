import fs from 'node:fs';
import YAML from 'yaml';
import { ConfigError } from './env.js';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Reads a declarative config file: YAML, with `${NAME}` taking the environment variable's
 * value. What the document must hold is the resource model's to check (src/resources/
 * config-file.ts); problems name the file and the path inside it.
 */
export function readYamlFile(file: string, env: Env = process.env): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return parseYamlText(text, file, env);
}

export function parseYamlText(text: string, file: string, env: Env = process.env): unknown {
  const doc = YAML.parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(`${file}: not valid YAML: ${doc.errors.map((e) => e.message.split('\n')[0]).join('; ')}`);
  }
  const problems: string[] = [];
  const data = interpolate(doc.toJS() ?? {}, '', env, problems);
  if (problems.length > 0) throw fileProblems(file, problems);
  return data;
}

/** The one error for a file's problems, each on its own line. */
export const fileProblems = (file: string, problems: readonly string[]): ConfigError =>
  new ConfigError(`${file}: ${problems.length} problem(s):\n  - ${problems.join('\n  - ')}`);

/** `${NAME}` in any string takes the environment variable's value, so secrets stay out of files. */
function interpolate(value: unknown, at: string, env: Env, problems: string[]): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      const v = env[name];
      if (v === undefined) {
        problems.push(`${at.slice(1)}: environment variable ${name} is not set`);
        return '';
      }
      return v;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, `${at}/${i}`, env, problems));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, `${at}/${k}`, env, problems)]));
  }
  return value;
}
