import fs from 'node:fs';
import path from 'node:path';

/**
 * Bounce and complaint reports as real MTAs and feedback loops send them (./bounce-reports/*.eml:
 * DSNs of Gmail, Exim, Exchange and Postfix, an ARF report, an out-of-office reply), with
 * `{{NAME}}` placeholders for what each test fills in (the VERP address, the recipient).
 */
export function bounceReport(name: string, vars: Record<string, string>): Buffer {
  let text = fs.readFileSync(path.join(import.meta.dirname, 'bounce-reports', name), 'utf8');
  for (const [k, v] of Object.entries(vars)) text = text.replaceAll(`{{${k}}}`, v);
  return Buffer.from(text.replace(/\r?\n/g, '\r\n'));
}
