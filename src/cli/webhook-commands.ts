import {
  deliveryNotFound,
  instantOf,
  replayDeliveries,
  replayDelivery,
  replayRangeProblem,
  waitsForEnable,
} from '../admin/webhook-deliveries.js';
import {
  graceMsOf,
  insertEndpoint,
  isWebhookId,
  requireEndpoint,
  rotateEndpointSecret,
  setEndpointEnabled,
  webhookFields,
} from '../admin/webhooks.js';
import type { Config } from '../config/env.js';
import { ApiError } from '../errors/api-error.js';
import type { Store } from '../storage/store.js';
import { createWebhookHttp } from '../webhooks/http-post.js';
import { sendTestEvent } from '../webhooks/test-event.js';
import {
  isWebhookEventType,
  type WebhookDeliveryState,
  type WebhookDeliveryView,
  type WebhookEndpoint,
} from '../webhooks/types.js';
import { usageOf } from './help.js';

/** `mailroom webhooks …`: the same checks and writes as the admin API (src/admin/webhooks.ts). */

type Out = (line: string) => void;

/** The flags `mailroom webhooks` reads, as parseArgs gave them (checked here). */
export interface WebhookCommandOptions {
  events?: string | undefined;
  id?: string | undefined;
  description?: string | undefined;
  /** `--header "Name: value"`, repeatable (webhooks add). */
  headers?: string[] | undefined;
  state?: string | undefined;
  eventType?: string | undefined;
  message?: string | undefined;
  limit?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  onlyFailed?: boolean | undefined;
  graceSeconds?: string | undefined;
}

const iso = (ms: number): string => new Date(ms).toISOString();
const STATES: readonly WebhookDeliveryState[] = ['pending', 'succeeded', 'failed'];
const isState = (s: string): s is WebhookDeliveryState => (STATES as readonly string[]).includes(s);

async function requireOrg(store: Store, orgId: string): Promise<void> {
  if ((await store.organizations.get(orgId)) === undefined) {
    throw new ApiError('not_found', { message: `Organization "${orgId}" does not exist.` });
  }
}

function endpointLine(e: WebhookEndpoint): string {
  const state = e.enabled ? 'enabled ' : `disabled (${e.disabled_reason ?? 'no reason'})`;
  const events = e.events === '*' ? '*' : e.events.join(',');
  // Header names only: the values are secrets.
  const headers = e.headers.length === 0 ? '' : `  headers: ${e.headers.map((h) => h.name).join(', ')}`;
  return `${e.id}  ${state}  ${events}  ${e.url}${headers}${e.description === null ? '' : `  # ${e.description}`}`;
}

function deliveryLine(d: WebhookDeliveryView): string {
  return (
    `${d.id}  ${d.state.padEnd(9)}  ${d.event_type}  ${d.message_id ?? '-'}  attempts ${d.attempts}  ` +
    `last ${d.last_status ?? '-'}${d.last_error === null ? '' : ` (${d.last_error})`}  ${iso(d.created_at)}`
  );
}

/** One delivery and each attempt: when, the answer (or none), how long, the error, the first of the body. */
function deliveryDetails(d: WebhookDeliveryView): string[] {
  const lines = [
    deliveryLine(d),
    `  endpoint ${d.endpoint_id}  ` +
      `webhook-id ${d.webhook_id}${d.next_attempt_at === null ? '' : `  next attempt ${iso(d.next_attempt_at)}`}`,
  ];
  if (d.log.length === 0) lines.push('  no attempts yet');
  for (const a of d.log) {
    lines.push(
      `  #${a.attempt}  ${iso(a.at)}  ${a.status === null ? 'no answer' : `HTTP ${a.status}`}  ${a.duration_ms} ms` +
        `${a.error === null ? '' : `  error: ${a.error}`}`,
    );
    if (a.response_body !== null && a.response_body !== '') lines.push(`      ${JSON.stringify(a.response_body.slice(0, 200))}`);
  }
  return lines;
}

/**
 * `--header "Name: value"` flags as headers (split at the first colon, the value's leading
 * blanks dropped, as curl's -H reads them), or what is wrong, naming the flag by its place
 * and never quoting the value.
 */
function headerFlags(flags: readonly string[]): Array<{ name: string; value: string }> | string {
  const headers: Array<{ name: string; value: string }> = [];
  for (const [i, flag] of flags.entries()) {
    const colon = flag.indexOf(':');
    if (colon <= 0) return `--header ${i + 1}: takes "Name: value"`;
    headers.push({ name: flag.slice(0, colon).trim(), value: flag.slice(colon + 1).replace(/^[ \t]+/, '') });
  }
  return headers;
}

/** A field problem as the flag it came from: `headers.1.name` is the second --header. */
function flagProblem(p: { field: string; message: string }): string {
  if (p.field === 'url') return `URL: ${p.message}`;
  const header = /^headers\.(\d+)\.(name|value)$/.exec(p.field);
  if (header !== null) return `--header ${Number(header[1]) + 1} (${header[2]}): ${p.message}`;
  return `--${p.field.split('.')[0]}: ${p.message}`;
}

export async function runWebhooks(
  store: Store,
  config: Config,
  args: string[],
  options: WebhookCommandOptions,
  out: Out,
  err: Out,
): Promise<number> {
  const [action, org, arg, extra] = args;
  const usage = (message?: string): number => {
    if (message !== undefined) err(message);
    err(usageOf('webhooks'));
    return 1;
  };
  const needsArg = [
    'add',
    'remove',
    'enable',
    'disable',
    'rotate-secret',
    'test',
    'deliveries',
    'delivery',
    'replay',
    'replay-range',
  ];
  if (action === undefined || org === undefined || extra !== undefined) return usage();
  if (action !== 'list' && !needsArg.includes(action)) return usage();
  if (action === 'list' ? arg !== undefined : arg === undefined) return usage();
  await requireOrg(store, org);
  const now = store.clock.now();

  if (action === 'list') {
    const endpoints = await store.webhookEndpoints.list(org);
    if (endpoints.length === 0) out(`Organization "${org}" has no webhook endpoints.`);
    for (const e of endpoints) out(endpointLine(e));
    return 0;
  }
  if (arg === undefined) return usage();
  switch (action) {
    case 'add': {
      const events =
        options.events === undefined
          ? undefined
          : options.events
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean);
      const headers = headerFlags(options.headers ?? []);
      if (typeof headers === 'string') return usage(headers);
      const { fields, problems } = await webhookFields(
        { url: arg, events, description: options.description, headers },
        { urlPolicy: config.webhooks.urlPolicy },
      );
      if (problems.length > 0) return usage(problems.map(flagProblem).join('\n'));
      if (options.id !== undefined && !isWebhookId(options.id)) {
        return usage('--id: 1..64 of a-z 0-9 _ -, not "deliveries"');
      }
      const created = await store.transaction((tx) => insertEndpoint(tx, org, options.id, fields, undefined, now));
      out(endpointLine(created.endpoint));
      out(`secret (shown this once): ${created.secret}`);
      return 0;
    }
    case 'remove':
      if (!(await store.webhookEndpoints.delete(org, arg))) await requireEndpoint(store, org, arg);
      out(`Removed ${arg}.`);
      return 0;
    case 'enable':
    case 'disable':
      out(endpointLine(await setEndpointEnabled(store, org, arg, action === 'enable')));
      return 0;
    case 'rotate-secret': {
      const grace = options.graceSeconds;
      if (grace !== undefined && !/^\d+$/.test(grace)) return usage('--grace-seconds takes a whole number of seconds.');
      const graceMs = grace === undefined ? config.webhooks.secretGraceMs : graceMsOf(Number(grace), '--grace-seconds');
      const rotation = await rotateEndpointSecret(store, org, arg, graceMs);
      out(`secret (shown this once): ${rotation.secret}`);
      out(
        rotation.previous_secret_expires_at === null
          ? 'The old secret stopped signing now.'
          : `The old secret signs too until ${iso(rotation.previous_secret_expires_at)}.`,
      );
      return 0;
    }
    case 'test': {
      await requireEndpoint(store, org, arg);
      const http = createWebhookHttp({ policy: config.webhooks.urlPolicy, timeoutMs: config.webhooks.attemptTimeoutMs });
      try {
        const r = await sendTestEvent({ store, clock: store.clock, http, settings: config.webhooks }, org, arg).catch(
          async (e: unknown) => {
            await requireEndpoint(store, org, arg); // removed meanwhile: "does not exist", exit 2
            throw e;
          },
        );
        out(
          `${r.ok ? 'ok' : 'failed'}: ${r.status === null ? 'no answer' : `HTTP ${r.status}`} in ${r.duration_ms} ms` +
            `${r.error === null ? '' : ` (${r.error})`}; logged as ${r.delivery_id}`,
        );
        return 0;
      } finally {
        await http.close();
      }
    }
    case 'deliveries': {
      await requireEndpoint(store, org, arg);
      const { state, eventType, message } = options;
      if (state !== undefined && !isState(state)) return usage(`--state: one of ${STATES.join(', ')}`);
      if (eventType !== undefined && !isWebhookEventType(eventType))
        return usage(`--event-type: "${eventType}" is not an event type`);
      if (message !== undefined && !/^[A-Za-z0-9_-]{1,100}$/.test(message)) return usage('--message: a message id');
      const limit = options.limit === undefined ? 25 : Number(options.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) return usage('--limit: 1 to 1000');
      const rows = await store.webhookDeliveries.list(
        org,
        {
          endpointId: arg,
          ...(state === undefined ? {} : { state }),
          ...(eventType === undefined ? {} : { eventType }),
          ...(message === undefined ? {} : { messageId: message }),
        },
        limit,
      );
      if (rows.length === 0) out('No deliveries.');
      for (const d of rows) out(deliveryLine(d));
      return 0;
    }
    case 'delivery': {
      const found = await store.webhookDeliveries.get(org, arg);
      if (found === undefined) throw deliveryNotFound(org, arg);
      for (const line of deliveryDetails(found)) out(line);
      return 0;
    }
    case 'replay': {
      const replayed = await replayDelivery(store, org, arg);
      out(`Queued ${arg} again.`);
      if (!replayed.endpointEnabled)
        out(`${waitsForEnable(replayed.endpointId)} (mailroom webhooks enable ${org} ${replayed.endpointId})`);
      return 0;
    }
    default: {
      const endpoint = await requireEndpoint(store, org, arg);
      const since = instantOf(options.since);
      const until = instantOf(options.until);
      if (since === undefined || until === undefined) return usage('--since and --until take ISO 8601 date-times.');
      const problem = replayRangeProblem(since, until);
      const queued =
        problem ?? (await replayDeliveries(store, org, arg, { since, until, onlyFailed: options.onlyFailed === true }));
      if (typeof queued !== 'number') return usage(`--${queued.field} ${queued.message.replace('since', '--since')}`);
      out(`Queued ${queued} deliver${queued === 1 ? 'y' : 'ies'}.`);
      if (!endpoint.enabled) out(`${waitsForEnable(endpoint.id)} (mailroom webhooks enable ${org} ${endpoint.id})`);
      return 0;
    }
  }
}
