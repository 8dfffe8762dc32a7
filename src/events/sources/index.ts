import { WEBHOOK_SOURCES, type WebhookSource } from '../../providers/index.js';
import type { WebhookSourceHandler } from '../types.js';
import type { ClaimToken } from './mailgun.js';

/**
 * The registry of webhook sources: a service's `events.source` names one. A source not built
 * yet is undefined, and the intake treats a service configured for it like one with no events
 * config (404), never as an open door.
 */

/** What the sources need from the outside world (storage for single-use tokens, fetch, …). */
export interface SourceDeps {
  claimToken: ClaimToken;
  /** Config.snsCertHosts (MAILROOM_SNS_CERT_HOSTS); absent: AWS's own hosts only. */
  snsCertHosts?: readonly string[];
}

/** What a source's factory is given; each reads the part it needs (Mailgun `claimToken`, SES `certHosts`). */
export interface SourceContext {
  claimToken: ClaimToken;
  certHosts: readonly string[];
}

export type SourceRegistry = Readonly<Record<WebhookSource, WebhookSourceHandler | undefined>>;

const isHandler = (v: unknown): v is WebhookSourceHandler =>
  typeof v === 'object' && v !== null && 'verifyAndParse' in v && typeof v.verifyAndParse === 'function';

/**
 * Each webhook source of the provider registry (src/providers/index.ts) lives in `./<name>.ts`,
 * exporting `<name>Source`: its handler, or a function from a SourceContext to one. Found here
 * by that name, so a new provider adds no line to this file; a missing or misnamed export stops
 * the process at start, naming it.
 */
async function load(name: WebhookSource): Promise<(context: SourceContext) => WebhookSourceHandler> {
  // Vite (the tests' loader) would warn that it cannot list a variable import; Node resolves it as written.
  const module: Readonly<Record<string, unknown>> = await import(/* @vite-ignore */ `./${name}.js`);
  const exported = module[`${name}Source`];
  if (isHandler(exported)) return () => exported;
  if (typeof exported === 'function') return exported as (context: SourceContext) => WebhookSourceHandler;
  throw new Error(`src/events/sources/${name}.ts exports no ${name}Source`);
}

const FACTORIES = await Promise.all(WEBHOOK_SOURCES.map(async (name) => [name, await load(name)] as const));

export function webhookSources(deps: SourceDeps): SourceRegistry {
  const context: SourceContext = { claimToken: deps.claimToken, certHosts: deps.snsCertHosts ?? ['sns.*.amazonaws.com'] };
  return Object.fromEntries(FACTORIES.map(([name, build]) => [name, build(context)])) as Record<
    WebhookSource,
    WebhookSourceHandler
  >;
}
