import Handlebars from 'handlebars';
import { canonicalAddress } from '../domain/addresses.js';
import type { Template, TemplateContent } from '../domain/types.js';
import { ApiError } from '../errors/api-error.js';
import { AddressError, headerText, parseAddress, parseAddressList, type Address } from './recipients.js';

/** The email as accepted: stored with the message, so later template edits never change it. */
export interface RenderedEmail {
  subject: string;
  from: Address;
  reply_to: Address[];
  to: Address[];
  cc: Address[];
  bcc: Address[];
  html: string;
  text: string;
}

type Field = keyof TemplateContent;
type Compiled = Record<Field, Handlebars.TemplateDelegate>;

// A private Handlebars environment: no helper registered elsewhere in the process can run here.
const hb = Handlebars.create();
const FIELDS: readonly Field[] = ['subject', 'to', 'cc', 'bcc', 'from_name', 'from_email', 'reply_to', 'html', 'text'];

/**
 * Compiles every field of a template version once. Only the HTML body escapes `{{var}}`;
 * subject, text and address fields are plain text, where `&amp;` would be a visible bug.
 * `knownHelpersOnly` keeps a parameter name from ever resolving to a helper.
 */
export function compileTemplate(t: TemplateContent): Compiled {
  const out = {} as Compiled;
  for (const f of FIELDS) {
    const source = t[f];
    // Handlebars has no syntax outside `{{…}}`: a field without one renders as itself. Most
    // fields of a template are such (from, cc, bcc, reply_to, often the text): each Handlebars
    // call builds its prototype-access rules (~2–3 µs), about a dozen µs of a send's CPU.
    out[f] = source.includes('{{')
      ? hb.compile(source, { noEscape: f !== 'html', knownHelpersOnly: true, strict: false })
      : () => source;
  }
  return out;
}

/** Options of every render: never a parameter's prototype properties or methods. */
const RUNTIME_OPTIONS: Handlebars.RuntimeOptions = { allowProtoPropertiesByDefault: false, allowProtoMethodsByDefault: false };

export interface SenderDefaults {
  from_email?: string | undefined;
  from_name?: string | undefined;
}

export function renderEmail(
  compiled: Compiled,
  template: Template,
  params: Record<string, unknown>,
  sender: SenderDefaults,
): RenderedEmail {
  const raw = {} as Record<Field, string>;
  try {
    for (const f of FIELDS) raw[f] = compiled[f](params, RUNTIME_OPTIONS);
  } catch (err) {
    throw new ApiError('template_render_failed', {
      details: { reason: err instanceof Error ? err.message.split('\n')[0] : 'render error' },
    });
  }
  const fromEmail = raw.from_email.trim() || (template.from_email === '' ? (sender.from_email ?? '') : '');
  if (fromEmail === '') {
    throw new ApiError('service_unavailable_for_template', {
      message: 'Neither the template nor its service has a From address.',
      details: { reason: 'no_from_address' },
    });
  }
  try {
    const from = parseAddress('from_email', fromEmail);
    const email: RenderedEmail = {
      subject: headerText(raw.subject),
      from: { address: from.address, name: headerText(raw.from_name || from.name || sender.from_name || '') },
      reply_to: parseAddressList('reply_to', raw.reply_to),
      to: parseAddressList('to', raw.to),
      cc: parseAddressList('cc', raw.cc),
      bcc: parseAddressList('bcc', raw.bcc),
      html: raw.html,
      text: raw.text,
    };
    if (email.to.length === 0) throw new AddressError('to', raw.to, 'is empty after rendering');
    return email;
  } catch (err) {
    if (!(err instanceof AddressError)) throw err;
    if (err.field === 'from_email') {
      throw new ApiError('service_unavailable_for_template', {
        message: `The From address ${err.message}.`,
        details: { reason: 'invalid_from_address' },
      });
    }
    throw new ApiError('invalid_recipient', {
      message: `The rendered ${err.field} ${err.message}.`,
      details: { field: err.field, reason: err.message },
    });
  }
}

/** Every recipient address of a rendered email by its canonical key (lower-cased, IDN domain as A-label), without duplicates. */
export function allRecipients(email: RenderedEmail): string[] {
  return [...new Set([...email.to, ...email.cc, ...email.bcc].map((a) => canonicalAddress(a.address)))];
}
