import type { FieldProblem } from '../providers/descriptor.js';
import { HTTP_PROVIDERS, SETTINGS_PROVIDERS } from '../providers/index.js';
import type { ServiceInput } from './inputs.js';

/**
 * A service's provider settings beyond SMTP (issue 14): the stored blocks, the checks the
 * config file and the admin API share, and the failover chain's rules. The transports read
 * the stored blocks (`service.settings.<provider>`), so defaults are written out here. What
 * each provider's block holds is its descriptor's (src/providers/).
 */

/** The block named `name` in a service input (the schema made it an object, when given). */
function blockOf(input: ServiceInput, name: string): Readonly<Record<string, unknown>> | undefined {
  const block: unknown = (input as Readonly<Record<string, unknown>>)[name];
  return typeof block === 'object' && block !== null ? (block as Record<string, unknown>) : undefined;
}

/** The stored block: what was given, with the descriptor's defaults (Postmark `outbound`, Mailgun `us`). */
function stored(
  defaults: Readonly<Record<string, unknown>>,
  block: Readonly<Record<string, unknown>> | undefined,
): Record<string, unknown> | undefined {
  if (block === undefined) return undefined;
  return { ...defaults, ...Object.fromEntries(Object.entries(block).filter(([, v]) => v !== undefined)) };
}

/** Settings written beside serviceFields' own: the HTTP providers' blocks given, the failover chain. */
export function providerSettings(input: ServiceInput): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const provider of HTTP_PROVIDERS) {
    const block = stored(provider.settings.defaults, blockOf(input, provider.name));
    if (block !== undefined) out[provider.name] = block;
  }
  if (input.failover !== undefined) out.failover = [...input.failover];
  if (input.failover_on_service_error !== undefined) out.failover_on_service_error = input.failover_on_service_error;
  return out;
}

/**
 * What the schema cannot say about one service: the block its provider needs (a sendgrid
 * service without `sendgrid` cannot send), no block of another HTTP provider (a leftover from
 * a provider change would look in use and is not), each block's own rules (SES keys both or
 * neither), a failover chain without itself or a repeat. Field names as the admin API's
 * `details.fields`.
 */
export function serviceProblems(id: string, input: ServiceInput): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const { name, kind } of SETTINGS_PROVIDERS) {
    const block = blockOf(input, name);
    if (name === input.provider && block === undefined)
      problems.push({ field: name, message: `is required when provider is ${name}` });
    // An SMTP block beside another provider is let through, as before the HTTP providers came.
    if (kind === 'http' && name !== input.provider && block !== undefined)
      problems.push({ field: name, message: `is the settings of provider ${name}, but provider is ${input.provider}` });
  }
  for (const { name, settings } of SETTINGS_PROVIDERS) {
    const block = blockOf(input, name);
    if (block === undefined || !('problems' in settings)) continue;
    for (const p of settings.problems(block)) problems.push({ field: `${name}.${p.field}`, message: p.message });
  }
  const seen = new Set<string>();
  (input.failover ?? []).forEach((target, i) => {
    if (target === id) problems.push({ field: `failover.${i}`, message: `is the service itself ("${id}")` });
    else if (seen.has(target)) problems.push({ field: `failover.${i}`, message: `names "${target}" twice` });
    seen.add(target);
  });
  return problems;
}

/**
 * The chain's targets among the organization's services: each must exist, and no chain may
 * lead back to `id` (A → B → A would pass a message back and forth). `chains` holds every
 * service's failover list as it will be once `id` is written (its own included).
 */
export function failoverProblems(id: string, chains: ReadonlyMap<string, readonly string[]>): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const own = chains.get(id) ?? [];
  own.forEach((target, i) => {
    if (target !== id && !chains.has(target))
      problems.push({ field: `failover.${i}`, message: `names "${target}", which is no service of this organization` });
  });
  if (problems.length > 0) return problems;
  const cycle = cycleThrough(id, chains);
  if (cycle !== undefined) problems.push({ field: 'failover', message: `makes a cycle: ${cycle.join(' → ')}` });
  return problems;
}

/** A path id → … → id through the chains, if there is one (depth-first; chains are ≤ 10 long). */
function cycleThrough(id: string, chains: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const visited = new Set<string>();
  const walk = (node: string, path: string[]): string[] | undefined => {
    for (const next of chains.get(node) ?? []) {
      if (next === id) return [...path, id];
      if (visited.has(next)) continue;
      visited.add(next);
      const found = walk(next, [...path, next]);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return walk(id, [id]);
}

/** A service's stored failover list (settings.failover), ignoring anything of another shape. */
export function storedFailover(settings: Readonly<Record<string, unknown>>): string[] {
  const list = settings.failover;
  return Array.isArray(list) ? list.filter((s): s is string => typeof s === 'string') : [];
}
