import type { Fields } from './mime.js';

/**
 * Mail to a bounce address that is no report: vacation and out-of-office replies, ticket
 * systems acknowledging receipt. They say nothing about delivery, so they are dropped (and
 * counted), never read as a bounce. Signals, any one enough: RFC 3834 Auto-Submitted (other
 * than "no"), the de-facto X-Autoreply / X-Autorespond / X-Auto-Response-Suppress-style
 * headers, Precedence auto_reply, and the subjects common clients use.
 */
const SUBJECT = new RegExp(
  `^\\s*(${[
    'auto(matic)?[ -]?(reply|response|antwort)|out of (the )?office|abwesenheitsnotiz|automatische antwort',
    'r[ée]ponse automatique|respuesta autom[áa]tica|risposta automatica|i am (currently )?out|on vacation|vacation reply',
  ].join('|')})`,
  'i',
);

export function isAutoReply(headers: Fields): boolean {
  const auto = headers.get('auto-submitted');
  if (auto !== undefined && auto.trim().toLowerCase() !== 'no') return true;
  if (headers.get('x-autoreply') !== undefined || headers.get('x-autorespond') !== undefined) return true;
  const precedence = (headers.get('precedence') ?? '').trim().toLowerCase();
  if (precedence === 'auto_reply') return true;
  return SUBJECT.test(headers.get('subject') ?? '');
}
