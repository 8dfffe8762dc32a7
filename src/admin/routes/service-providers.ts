import { Type, type Static, type TOptional, type TSchema } from '@sinclair/typebox';
import type { SettingsBlock } from '../../providers/descriptor.js';
import { HTTP_PROVIDERS, type HttpProvider } from '../../providers/index.js';
import { storedFailover } from '../../resources/provider-settings.js';
import type { Service } from '../../domain/types.js';
import { invalidFields } from './common.js';
import { maskSecret, SECRET_MASK } from './resources.js';

/**
 * The HTTP providers' settings blocks and the failover chain in the admin API's service
 * resource (issue 14), as each provider's descriptor describes them (src/providers/). Secrets
 * (API keys, tokens, SES's secret_access_key) are write-only, as SMTP's `pass` is: a read shows
 * "********" when set, and a PUT that sends the mask back keeps the stored value (GET → edit →
 * PUT never stores the mask).
 */

const HttpViews = Object.fromEntries(HTTP_PROVIDERS.map((p) => [p.name, Type.Optional(p.settings.view)])) as unknown as {
  [P in HttpProvider as P['name']]: TOptional<P['settings']['view']>;
};

export const ProviderResourceFields = {
  ...HttpViews,
  failover: Type.Optional(
    Type.Array(Type.String(), { description: "Services tried in order while this one's circuit breaker is open" }),
  ),
  failover_on_service_error: Type.Optional(Type.Boolean()),
};
const ProviderResource = Type.Object(ProviderResourceFields);
type ProviderResource = Static<typeof ProviderResource>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether a stored value has the JSON type the view gives the field (a row written by hand may not). */
function fits(schema: TSchema, v: unknown): boolean {
  switch (schema.type) {
    case 'string':
      return typeof v === 'string';
    case 'boolean':
      return typeof v === 'boolean';
    case 'integer':
      return Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    default:
      return false;
  }
}

/**
 * A stored block as GET shows it: secrets masked; a field the view requires always shown (the
 * descriptor's default, else "", when the stored value is missing or empty); an optional field
 * only when stored (GET minus read-only fields is a valid PUT).
 */
function blockView(settings: SettingsBlock, block: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const required = new Set(settings.view.required ?? []);
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(settings.view.properties)) {
    const v = block[name];
    const stored = fits(schema, v) && v !== '' ? v : undefined;
    if (settings.secrets.includes(name)) {
      if (required.has(name) || typeof v === 'string') out[name] = maskSecret(typeof v === 'string' ? v : '');
    } else if (required.has(name)) out[name] = stored ?? settings.defaults[name] ?? '';
    else if (fits(schema, v)) out[name] = v;
  }
  return out;
}

/** The resource's provider fields, from the stored settings (serviceFields wrote them), secrets masked. */
export function providerResource(settings: Readonly<Record<string, unknown>>): ProviderResource {
  const out: Record<string, unknown> = {};
  for (const provider of HTTP_PROVIDERS) {
    const block = settings[provider.name];
    if (isRecord(block)) out[provider.name] = blockView(provider.settings, block);
  }
  if (Array.isArray(settings.failover)) out.failover = storedFailover(settings);
  if (typeof settings.failover_on_service_error === 'boolean') out.failover_on_service_error = settings.failover_on_service_error;
  return out as ProviderResource;
}

/**
 * The wanted settings with each masked secret replaced by the stored one; the mask of a secret
 * that is not stored (or stored under another provider's block) is a 400 naming the field, and
 * so is the mask beside a changed endpoint, region, domain or access key id (the descriptor's
 * `destination`): the stored secret only goes where it went before.
 */
export function withStoredProviderSecrets(
  wanted: Record<string, unknown>,
  current: Service | undefined,
): Record<string, unknown> {
  const out = { ...wanted };
  const problems: Array<{ field: string; message: string }> = [];
  for (const { name: provider, settings } of HTTP_PROVIDERS) {
    const block = out[provider];
    if (!isRecord(block)) continue;
    const stored = current?.settings[provider];
    const next = { ...block };
    for (const name of settings.secrets) {
      if (next[name] !== SECRET_MASK) continue;
      const kept = isRecord(stored) ? stored[name] : undefined;
      if (typeof kept !== 'string' || kept === '') {
        problems.push({ field: `${provider}.${name}`, message: 'is the mask of a secret that is not stored' });
        continue;
      }
      const changed = settings.destination.filter((bound) => isRecord(stored) && next[bound] !== stored[bound]);
      if (changed.length > 0) problems.push({ field: `${provider}.${name}`, message: secretRebound(provider, changed) });
      else next[name] = kept;
    }
    out[provider] = next;
  }
  if (problems.length > 0) throw invalidFields(problems);
  return out;
}

/** The 400's message when a mask comes with a changed destination (shared with SMTP's `pass`). */
export function secretRebound(block: string, changed: readonly string[]): string {
  const names = changed.map((c) => `${block}.${c}`).join(', ');
  return (
    `is the mask "${SECRET_MASK}", but ${names} changed: send the secret again when ` +
    `the ${changed.join(' or ')} changes (the stored one only goes where it went before)`
  );
}
