import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { SmtpSettings } from '../domain/types.js';
import { smtp } from '../providers/smtp.js';

/**
 * `settings.smtp` as stored: the admin API's and config file's SMTP block (src/providers/
 * smtp.ts), the same rules (host not empty, port 1..65535, DKIM fields not empty), with the
 * defaults serviceFields fills in (every field present, `dkim` null when unset). Fields it does
 * not name are let through, as the transport ignores them.
 */
const { dkim, ...fields } = Type.Required(smtp.settings.schema).properties;
const StoredSmtp = Type.Object({ ...fields, dkim: Type.Union([dkim, Type.Null()]) });

// Compiled once: a batch checks each of its services (microseconds, next to its queries).
const checkStoredSmtp = TypeCompiler.Compile(StoredSmtp);

export type SmtpSettingsRead = { ok: true; smtp: SmtpSettings | undefined } | { ok: false; problem: string };

/**
 * A service's SMTP settings, checked (the stored shape is SmtpSettings, or this would not
 * compile); `smtp` undefined when it has none (an outbox service). A problem names the first
 * failing rule of each field, at most three of them.
 */
export function readSmtpSettings(settings: Readonly<Record<string, unknown>>): SmtpSettingsRead {
  const smtp = settings.smtp;
  if (smtp === undefined) return { ok: true, smtp: undefined };
  if (checkStoredSmtp.Check(smtp)) return { ok: true, smtp };
  const byField = new Map<string, string>();
  for (const e of checkStoredSmtp.Errors(smtp)) {
    const field = `smtp${e.path.replaceAll('/', '.')}`;
    if (!byField.has(field)) byField.set(field, e.message.toLowerCase());
  }
  return {
    ok: false,
    problem: [...byField]
      .slice(0, 3)
      .map(([field, message]) => `${field}: ${message}`)
      .join('; '),
  };
}
