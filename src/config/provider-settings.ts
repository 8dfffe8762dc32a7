import { HTTP_PROVIDERS, type HttpProvider, type ServiceInput } from './resources.js';

/**
 * A service's provider settings beyond SMTP (issue 14): the stored blocks, the checks the
 * config file and the admin API share, and the failover chain's rules. The transports read
 * the stored blocks (`service.settings.<provider>`), so defaults are written out here.
 */

type FieldProblem = { field: string; message: string };

/** Settings that are secrets, per block: never read back (the admin API masks them). */
export const PROVIDER_SECRETS: Readonly<Record<HttpProvider, readonly string[]>> = {
  ses: ['secret_access_key'],
  postmark: ['server_token'],
  sendgrid: ['api_key'],
  mailgun: ['api_key'],
  resend: ['api_key'],
};

/**
 * Settings that decide where a block's secret goes (or what it is the secret of): a write that
 * keeps the stored secret by sending its mask back must leave these as stored, or an admin who
 * cannot read the secret could point it at a server of theirs (endpoint → http://attacker,
 * then POST …/test) and read it there. Changing one needs the secret sent again.
 */
export const SECRET_BOUND_TO: Readonly<Record<HttpProvider, readonly string[]>> = {
  ses: ['endpoint', 'region', 'access_key_id'],
  postmark: ['endpoint'],
  sendgrid: ['endpoint'],
  mailgun: ['endpoint', 'region', 'domain'],
  resend: ['endpoint'],
};

export const isHttpProvider = (p: string): p is HttpProvider => (HTTP_PROVIDERS as readonly string[]).includes(p);

/** The stored block: what was given, with the documented defaults (Postmark `outbound`, Mailgun `us`). */
function stored(provider: HttpProvider, input: ServiceInput): Record<string, unknown> | undefined {
  const given = (block: object | undefined) => (block === undefined ? undefined : Object.fromEntries(Object.entries(block).filter(([, v]) => v !== undefined)));
  switch (provider) {
    case 'postmark': {
      const b = given(input.postmark);
      return b === undefined ? undefined : { message_stream: 'outbound', ...b };
    }
    case 'mailgun': {
      const b = given(input.mailgun);
      return b === undefined ? undefined : { region: 'us', ...b };
    }
    default:
      return given(input[provider]);
  }
}

/** Settings written beside serviceFields' own: the provider blocks given, the failover chain. */
export function providerSettings(input: ServiceInput): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const provider of HTTP_PROVIDERS) {
    const block = stored(provider, input);
    if (block !== undefined) out[provider] = block;
  }
  if (input.failover !== undefined) out.failover = [...input.failover];
  if (input.failover_on_service_error !== undefined) out.failover_on_service_error = input.failover_on_service_error;
  return out;
}

/**
 * What the schema cannot say about one service: the block its provider needs (a sendgrid
 * service without `sendgrid` cannot send), no block of another HTTP provider (a leftover from
 * a provider change would look in use and is not), SES keys both or neither, a failover chain
 * without itself or a repeat. Field names as the admin API's `details.fields`.
 */
export function serviceProblems(id: string, input: ServiceInput): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (input.provider === 'smtp' && input.smtp === undefined) problems.push({ field: 'smtp', message: 'is required when provider is smtp' });
  for (const provider of HTTP_PROVIDERS) {
    const present = input[provider] !== undefined;
    if (provider === input.provider && !present) problems.push({ field: provider, message: `is required when provider is ${provider}` });
    if (provider !== input.provider && present) problems.push({ field: provider, message: `is the settings of provider ${provider}, but provider is ${input.provider}` });
  }
  const ses = input.ses;
  if (ses !== undefined && (ses.access_key_id === undefined) !== (ses.secret_access_key === undefined)) {
    const missing = ses.access_key_id === undefined ? 'access_key_id' : 'secret_access_key';
    problems.push({ field: `ses.${missing}`, message: "is required with the other key (give both, or neither for the AWS SDK's default credential chain)" });
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
    if (target !== id && !chains.has(target)) problems.push({ field: `failover.${i}`, message: `names "${target}", which is no service of this organization` });
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
