import type { Service } from '../../domain/types.js';
import { smtp } from '../../providers/smtp.js';
import type { ServiceInput } from '../../resources/inputs.js';
import { eventsProblems, serviceFields } from '../../resources/normalize.js';
import { serviceProblems } from '../../resources/provider-settings.js';
import type { ServiceFields } from '../../storage/services.js';
import { Type, type Static } from '@sinclair/typebox';
import { ApiError } from '../../errors/api-error.js';
import { stripReadOnly, withoutReadOnly } from '../put-patch.js';
import type { ServicePutBody } from './bodies.js';
import { invalidFields, LookupId } from './common.js';
import { EVENTS_SECRETS, SECRET_MASK, smtpSettings } from './resources.js';
import { secretRebound, withStoredProviderSecrets } from './service-providers.js';

/**
 * A service body as PUT and PATCH store it: normalised as the config file does, with every
 * secret sent back as its mask (what GET shows) replaced by the stored one, where the rules allow.
 */

export const ServiceParams = Type.Object({ org: LookupId, id: LookupId });

export const serviceNotFound = (org: string, id: string): ApiError =>
  new ApiError('not_found', { message: `Service "${id}" does not exist in organization "${org}".` });

/**
 * A PUT body (what GET returns, edited) as the service it describes, every read-only field
 * dropped; with `urlId`, an `id` naming another service is a 400 (PUT's rule).
 */
export function servicePutInput(body: Static<typeof ServicePutBody>, urlId?: string): ServiceInput {
  const {
    events_url: _url,
    breaker: _breaker,
    ...input
  } = urlId === undefined ? stripReadOnly(body) : withoutReadOnly(body, urlId);
  return input;
}

/** What decides where SMTP's `pass` goes: the mask keeps the stored one only while these stay. */
const SMTP_PASS_BOUND_TO = smtp.settings.destination;

/**
 * Normalises the body as the config file does, and puts stored secrets back where the body
 * repeats their mask, so GET → edit → PUT never stores "********" as a password.
 */
export function wantedFields(id: string, input: ServiceInput, current: Service | undefined): ServiceFields {
  // The block the provider needs (a sendgrid service without `sendgrid` is a 400 naming it), SES keys, the chain's own rules.
  const missing = [...serviceProblems(id, input), ...eventsProblems(input.events)];
  if (missing.length > 0) throw invalidFields(missing);
  const normalized = withStoredEventSecrets(serviceFields(input), current);
  const fields = { ...normalized, settings: withStoredProviderSecrets(normalized.settings, current) };
  const wantedSmtp = smtpSettings(fields.settings);
  if (wantedSmtp === null) return fields;
  const stored = current === undefined ? null : smtpSettings(current.settings);
  const problems: Array<{ field: string; message: string }> = [];
  if (wantedSmtp.pass === SECRET_MASK) {
    // The stored password goes only to the server and account it was given for: a changed host,
    // port or user (an admin's own server) needs it sent again, as an API endpoint does.
    const changed = stored === null ? [] : SMTP_PASS_BOUND_TO.filter((name) => wantedSmtp[name] !== stored[name]);
    if (stored === null || stored.pass === '')
      problems.push({ field: 'smtp.pass', message: 'is the mask of a password that is not stored' });
    else if (changed.length > 0) problems.push({ field: 'smtp.pass', message: secretRebound('smtp', changed) });
    else wantedSmtp.pass = stored.pass;
  }
  if (wantedSmtp.dkim !== null && wantedSmtp.dkim.private_key === SECRET_MASK) {
    if (stored?.dkim == null)
      problems.push({ field: 'smtp.dkim.private_key', message: 'is the mask of a key that is not stored' });
    else wantedSmtp.dkim = { ...wantedSmtp.dkim, private_key: stored.dkim.private_key };
  }
  if (problems.length > 0) throw invalidFields(problems);
  return { ...fields, settings: { ...fields.settings, smtp: wantedSmtp } };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An `events` secret sent back as the mask keeps the stored one; the mask of nothing stored is a 400. */
function withStoredEventSecrets(fields: ServiceFields, current: Service | undefined): ServiceFields {
  const wanted = fields.settings.events;
  if (!isRecord(wanted)) return fields;
  const stored = current?.settings.events;
  const events = { ...wanted };
  const problems: Array<{ field: string; message: string }> = [];
  for (const name of EVENTS_SECRETS) {
    if (events[name] !== SECRET_MASK) continue;
    const kept = isRecord(stored) ? stored[name] : undefined;
    if (typeof kept === 'string' && kept !== '') events[name] = kept;
    else problems.push({ field: `events.${name}`, message: 'is the mask of a secret that is not stored' });
  }
  if (problems.length > 0) throw invalidFields(problems);
  return { ...fields, settings: { ...fields.settings, events } };
}
