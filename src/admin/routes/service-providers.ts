import { Type, type Static } from '@sinclair/typebox';
import { PROVIDER_SECRETS, SECRET_BOUND_TO, storedFailover } from '../../config/provider-settings.js';
import { HTTP_PROVIDERS } from '../../config/resources.js';
import type { Service } from '../../domain/types.js';
import { invalidFields } from './common.js';
import { maskSecret, SECRET_MASK } from './resources.js';

/**
 * The HTTP providers' settings blocks and the failover chain in the admin API's service
 * resource (issue 14). Secrets (API keys, tokens, SES's secret_access_key) are write-only, as
 * SMTP's `pass` is: a read shows "********" when set, and a PUT that sends the mask back keeps
 * the stored value (GET → edit → PUT never stores the mask).
 */

const masked = Type.String({ description: `"${SECRET_MASK}" when set; send it back unchanged to keep the stored value` });
const Endpoint = Type.Optional(Type.String());

export const ProviderResourceFields = {
  ses: Type.Optional(Type.Object({
    region: Type.String(),
    access_key_id: Type.Optional(Type.String()),
    secret_access_key: Type.Optional(masked),
    configuration_set: Type.Optional(Type.String()),
    endpoint: Endpoint,
  })),
  postmark: Type.Optional(Type.Object({ server_token: masked, message_stream: Type.String(), endpoint: Endpoint })),
  sendgrid: Type.Optional(Type.Object({ api_key: masked, endpoint: Endpoint })),
  mailgun: Type.Optional(Type.Object({ domain: Type.String(), api_key: masked, region: Type.String(), endpoint: Endpoint })),
  resend: Type.Optional(Type.Object({ api_key: masked, endpoint: Endpoint })),
  failover: Type.Optional(Type.Array(Type.String(), { description: "Services tried in order while this one's circuit breaker is open" })),
  failover_on_service_error: Type.Optional(Type.Boolean()),
};
const ProviderResource = Type.Object(ProviderResourceFields);
type ProviderResource = Static<typeof ProviderResource>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
/** Optional fields: shown when stored as a string, left out otherwise (GET minus read-only fields is a valid PUT). */
const opt = (block: Record<string, unknown>, name: string): Record<string, string> => (typeof block[name] === 'string' ? { [name]: block[name] } : {});

/** The resource's provider fields, from the stored settings (serviceFields wrote them), secrets masked. */
export function providerResource(settings: Readonly<Record<string, unknown>>): ProviderResource {
  const out: ProviderResource = {};
  const { ses, postmark, sendgrid, mailgun, resend } = settings;
  if (isRecord(ses)) {
    out.ses = {
      region: str(ses.region),
      ...opt(ses, 'access_key_id'),
      ...(typeof ses.secret_access_key === 'string' ? { secret_access_key: maskSecret(ses.secret_access_key) } : {}),
      ...opt(ses, 'configuration_set'),
      ...opt(ses, 'endpoint'),
    };
  }
  if (isRecord(postmark)) {
    out.postmark = { server_token: maskSecret(str(postmark.server_token)), message_stream: str(postmark.message_stream) || 'outbound', ...opt(postmark, 'endpoint') };
  }
  if (isRecord(sendgrid)) out.sendgrid = { api_key: maskSecret(str(sendgrid.api_key)), ...opt(sendgrid, 'endpoint') };
  if (isRecord(mailgun)) {
    out.mailgun = { domain: str(mailgun.domain), api_key: maskSecret(str(mailgun.api_key)), region: str(mailgun.region) || 'us', ...opt(mailgun, 'endpoint') };
  }
  if (isRecord(resend)) out.resend = { api_key: maskSecret(str(resend.api_key)), ...opt(resend, 'endpoint') };
  if (Array.isArray(settings.failover)) out.failover = storedFailover(settings);
  if (typeof settings.failover_on_service_error === 'boolean') out.failover_on_service_error = settings.failover_on_service_error;
  return out;
}

/**
 * The wanted settings with each masked secret replaced by the stored one; the mask of a secret
 * that is not stored (or stored under another provider's block) is a 400 naming the field, and
 * so is the mask beside a changed endpoint, region, domain or access key id (SECRET_BOUND_TO):
 * the stored secret only goes where it went before.
 */
export function withStoredProviderSecrets(wanted: Record<string, unknown>, current: Service | undefined): Record<string, unknown> {
  const out = { ...wanted };
  const problems: Array<{ field: string; message: string }> = [];
  for (const provider of HTTP_PROVIDERS) {
    const block = out[provider];
    if (!isRecord(block)) continue;
    const stored = current?.settings[provider];
    const next = { ...block };
    for (const name of PROVIDER_SECRETS[provider]) {
      if (next[name] !== SECRET_MASK) continue;
      const kept = isRecord(stored) ? stored[name] : undefined;
      if (typeof kept !== 'string' || kept === '') {
        problems.push({ field: `${provider}.${name}`, message: 'is the mask of a secret that is not stored' });
        continue;
      }
      const changed = SECRET_BOUND_TO[provider].filter((bound) => isRecord(stored) && next[bound] !== stored[bound]);
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
  return `is the mask "${SECRET_MASK}", but ${names} changed: send the secret again when the ${changed.join(' or ')} changes (the stored one only goes where it went before)`;
}
