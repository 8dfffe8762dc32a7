import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { eventFilter, secretProblem } from '../resources/normalize.js';
import { WebhookId, type WebhookSettingsInput } from '../resources/webhook-inputs.js';
import { ApiError } from '../errors/api-error.js';
import type { Repos, Store } from '../storage/store.js';
import type { WebhookEndpointFields } from '../storage/webhook-endpoints.js';
import { SECRET_MASK } from '../providers/schema.js';
import { type CustomHeader, customHeaderProblems } from '../webhooks/custom-headers.js';
import { generateSecret } from '../webhooks/signing.js';
import type { WebhookEndpoint, WebhookUrlPolicy } from '../webhooks/types.js';
import { endpointUrlRefusal, type LookupFn } from '../webhooks/url-guard.js';
import type { FieldProblem } from './put-patch.js';
import { invalidFields } from './routes/common.js';

/**
 * Outbound webhook endpoints as the admin API, the config file and the CLI manage them: the
 * checks all three share (URL rules, event names, secrets) and the writes. Every problem is a
 * field and a sentence, so the API answers `invalid_body` naming the field and the config file
 * names the path inside it.
 */

/** WebhookId's rule: `[a-z0-9_-]`, 1..64; `deliveries` is the log's path segment (…/webhooks/deliveries), never an id. */
const WEBHOOK_ID = new RegExp(WebhookId.pattern ?? '');
export const isWebhookId = (id: string): boolean => WEBHOOK_ID.test(id);

/** `wh_` + 24 hex digits (96 random bits): ids need to be unique, not secret. */
export const newWebhookId = (): string => `wh_${randomBytes(12).toString('hex')}`;

/** The longest grace a rotation may give the old secret: 30 days, like API keys. */
export const MAX_SECRET_GRACE_SECONDS = 30 * 24 * 3600;

/** How the checks reach the outside world: the URL policy, and DNS (tests pass their own). */
export interface WebhookCheckDeps {
  urlPolicy: WebhookUrlPolicy;
  lookup?: LookupFn;
  /**
   * The config file at start: a name that does not resolve now is a warning, not a refusal, so a
   * DNS blip cannot stop a start (the connection-time guard still checks every address). The
   * admin API and the CLI refuse it: the operator is there to retry.
   */
  acceptUnresolved?: boolean;
}

/** checkEndpointUrl's sentence as a field problem (its sentences start with "url …"), and whether the name did not resolve. */
export async function urlProblem(url: string, deps: WebhookCheckDeps): Promise<(FieldProblem & { unresolved: boolean }) | null> {
  const refusal = await endpointUrlRefusal(url, deps.urlPolicy, deps.lookup);
  return refusal === null ? null : { field: 'url', message: refusal.reason.replace(/^url /, ''), unresolved: refusal.unresolved };
}

/** Headers as an input gives them: the API's list, or the config file's map of name to value. */
export type HeadersInput = readonly CustomHeader[] | Readonly<Record<string, string>>;

/** Anything an input may carry: the API's settings, with the config file's header map. */
export type WebhookFieldsInput = Omit<WebhookSettingsInput, 'headers'> & { headers?: HeadersInput | undefined };

const originOf = (url: string): string | undefined => {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
};

/**
 * The headers to store: a value sent back as the mask (what reads show) is the stored value of
 * the header of that name, as a service's secret is (src/admin/routes/service-fields.ts), and
 * only while the URL's origin (scheme, host, port) is the one it was given for: the stored
 * credential only goes where it went before. `current`: the endpoint being edited (none: a mask is refused).
 */
export function headersWanted(
  input: HeadersInput | undefined,
  url: string,
  current?: WebhookEndpoint,
): {
  headers: CustomHeader[];
  problems: FieldProblem[];
} {
  const given: CustomHeader[] = Array.isArray(input)
    ? input.map((h: CustomHeader) => ({ name: h.name, value: h.value }))
    : Object.entries(input ?? {}).map(([name, value]) => ({ name, value: String(value) }));
  const problems: FieldProblem[] = [];
  const moved = current !== undefined && originOf(current.url) !== originOf(url);
  const headers = given.map((h, i) => {
    if (h.value !== SECRET_MASK) return h;
    const field = `headers.${i}.value`;
    const stored = current?.headers.find((s) => s.name.toLowerCase() === h.name.toLowerCase());
    if (stored === undefined) {
      problems.push({ field, message: `is the mask "${SECRET_MASK}" of "${h.name}", which is not stored: send its value` });
    } else if (moved) {
      problems.push({
        field,
        message:
          `is the mask "${SECRET_MASK}" of "${h.name}", but the URL now goes to ${originOf(url) ?? 'another origin'}: ` +
          'send the value again (or remove the header) when the host changes; the stored one only goes where it went before',
      });
    }
    return stored === undefined ? h : { name: h.name, value: stored.value };
  });
  if (problems.length === 0) problems.push(...customHeaderProblems(headers));
  return { headers, problems };
}

/**
 * The stored fields of an input (API body, YAML entry, CLI flags), or the problems (URL, events,
 * headers) found; `warnings` holds an unresolved name accepted under `acceptUnresolved`.
 * `current`: the endpoint an edit starts from, whose header values a mask keeps.
 */
export async function webhookFields(
  input: WebhookFieldsInput,
  deps: WebhookCheckDeps,
  current?: WebhookEndpoint,
): Promise<{ fields: WebhookEndpointFields; problems: FieldProblem[]; warnings: FieldProblem[] }> {
  const problems: FieldProblem[] = [];
  const warnings: FieldProblem[] = [];
  const url = await urlProblem(input.url, deps);
  if (url !== null)
    (url.unresolved && deps.acceptUnresolved === true ? warnings : problems).push({ field: url.field, message: url.message });
  const events = eventFilter(input.events, problems);
  const headers = headersWanted(input.headers, input.url, current);
  problems.push(...headers.problems);
  return {
    fields: {
      url: input.url,
      description: input.description ?? null,
      events,
      enabled: input.enabled ?? true,
      headers: headers.headers,
    },
    problems,
    warnings,
  };
}

/** Whether two header lists are the same, in order, values included. */
export const sameHeaders = (a: readonly CustomHeader[], b: readonly CustomHeader[]): boolean =>
  a.length === b.length && a.every((h, i) => h.name === b[i]?.name && h.value === b[i]?.value);

const notFound = (orgId: string, id: string) =>
  new ApiError('not_found', { message: `Webhook endpoint "${id}" does not exist in organization "${orgId}".` });

export async function requireEndpoint(repos: Repos, orgId: string, id: string): Promise<WebhookEndpoint> {
  const endpoint = await repos.webhookEndpoints.get(orgId, id);
  if (endpoint === undefined) throw notFound(orgId, id);
  return endpoint;
}

/**
 * Whether `given` is the stored secret, in constant time: both are hashed first so the lengths
 * match and a wrong guess's timing says nothing about how much of it was right.
 */
export function sameSecret(given: string, stored: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(stored));
}

/** A created endpoint and its secret: the only time the secret is shown, besides a rotation. */
export interface CreatedEndpoint {
  endpoint: WebhookEndpoint;
  secret: string;
}

/**
 * Creates an endpoint in `tx`: the id given (409 `conflict` when taken) or a new `wh_…`, the
 * secret given (checked) or a generated one. Fields are checked by the caller (webhookFields).
 */
export async function insertEndpoint(
  tx: Repos,
  orgId: string,
  id: string | undefined,
  fields: WebhookEndpointFields,
  secret: string | undefined,
  now: number,
): Promise<CreatedEndpoint> {
  const bad = secretProblem(secret);
  if (bad !== null) throw invalidFields([bad]);
  const endpointId = id ?? newWebhookId();
  if ((await tx.webhookEndpoints.get(orgId, endpointId)) !== undefined) {
    throw new ApiError('conflict', { message: `Webhook endpoint "${endpointId}" already exists in organization "${orgId}".` });
  }
  const value = secret ?? generateSecret();
  await tx.webhookEndpoints.insert(orgId, endpointId, fields, value, now);
  return { endpoint: await requireEndpoint(tx, orgId, endpointId), secret: value };
}

/** Writes what differs: URL, description and events in one update, `enabled` through setEnabled. */
export async function updateEndpoint(
  tx: Repos,
  current: WebhookEndpoint,
  fields: WebhookEndpointFields,
  now: number,
): Promise<WebhookEndpoint> {
  const { org_id: orgId, id } = current;
  const sameEvents = JSON.stringify(current.events) === JSON.stringify(fields.events);
  const changed = current.url !== fields.url || current.description !== fields.description;
  if (changed || !sameEvents || !sameHeaders(current.headers, fields.headers)) {
    await tx.webhookEndpoints.update(orgId, id, fields, now);
  }
  if (current.enabled !== fields.enabled) {
    await tx.webhookEndpoints.setEnabled(orgId, id, fields.enabled, fields.enabled ? null : 'disabled by an operator', now);
  }
  return requireEndpoint(tx, orgId, id);
}

/** Enables (clearing the reason and the failure clock) or disables an endpoint by an operator's word. */
export async function setEndpointEnabled(store: Store, orgId: string, id: string, enabled: boolean): Promise<WebhookEndpoint> {
  const now = store.clock.now();
  return store.transaction(async (tx) => {
    await requireEndpoint(tx, orgId, id);
    await tx.webhookEndpoints.setEnabled(orgId, id, enabled, enabled ? null : 'disabled by an operator', now);
    return requireEndpoint(tx, orgId, id);
  });
}

export interface SecretRotation {
  secret: string;
  /** Until when the old secret signs too; null when it stopped at once (a grace of 0). */
  previous_secret_expires_at: number | null;
}

/**
 * A new generated secret. The old one keeps signing beside it for `graceMs` (the configured
 * 24 h by default; 0 ends it now, as after a leak), so receivers can switch without a miss.
 */
export async function rotateEndpointSecret(store: Store, orgId: string, id: string, graceMs: number): Promise<SecretRotation> {
  const now = store.clock.now();
  const secret = generateSecret();
  const expiresAt = now + graceMs;
  return store.transaction(async (tx) => {
    await requireEndpoint(tx, orgId, id);
    await tx.webhookEndpoints.rotateSecret(orgId, id, secret, expiresAt, now);
    return { secret, previous_secret_expires_at: graceMs > 0 ? expiresAt : null };
  });
}

/** A grace in whole seconds, 0..30 days, as a 400 naming `field` otherwise. */
export function graceMsOf(seconds: number, field: string): number {
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > MAX_SECRET_GRACE_SECONDS) {
    throw invalidFields([{ field, message: `must be a whole number of seconds from 0 to ${MAX_SECRET_GRACE_SECONDS}` }]);
  }
  return seconds * 1000;
}
