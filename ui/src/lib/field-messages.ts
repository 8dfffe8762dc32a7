/**
 * The admin API's field problems in words (issue 29): Ajv's JSON Schema wording
 * (`must match pattern "^(\*\.)?…"`, `must be null`) read like a bug report to an operator.
 * Each known phrase becomes a sentence about the value; the server's own sentences (already
 * words: "is not a domain name: write example.com …") pass unchanged. Pure: unit-tested in
 * test/ui/field-messages.test.ts.
 */

/** What a pattern-checked field holds, by its last name (`security.allowed_origins.0` → allowed_origins). */
const PATTERN_WORDS: Readonly<Record<string, string>> = {
  allowed_origins: 'must be a domain such as example.com or *.example.com, with a :port if needed (no https://, no path)',
  mobile_app_schemes: 'must be an app scheme such as myapp (lowercase letters, digits, + . -; not http, https, file, …)',
  link_domains: 'must be a domain name such as example.com or *.example.com (no scheme, port or path)',
  id: 'may use only letters, digits, _ . - and must start with a letter or digit',
  bounce_domain: 'must be a domain name such as bounces.example.com',
  complaint_address: 'must be an e-mail address',
  key: 'must be a key starting pk_ or sk_',
};

/** Phrases of Ajv's that say nothing alone: another message of the same field says what is wanted. */
const NOISE = [/^must be null$/, /^must match a schema in anyOf$/, /^must match exactly one schema in oneOf$/];

const FORMAT_WORDS: Readonly<Record<string, string>> = {
  email: 'must be an e-mail address',
  uri: 'must be a URL',
  hostname: 'must be a host name',
  date: 'must be a date (YYYY-MM-DD)',
  'date-time': 'must be a date and time',
};

const TYPE_WORDS: Readonly<Record<string, string>> = {
  integer: 'must be a whole number',
  number: 'must be a number',
  string: 'must be text',
  boolean: 'must be yes or no',
  array: 'must be a list',
  object: 'must be a group of settings',
};

/** The field's own name: its last part that is no list index. */
function leafName(field: string): string {
  const parts = field.split('.').filter((p) => !/^\d+$/.test(p));
  return parts[parts.length - 1] ?? field;
}

const COMPARE_WORDS: Readonly<Record<string, string>> = {
  '>=': 'must be at least',
  '<=': 'must be at most',
  '>': 'must be more than',
  '<': 'must be less than',
};

/** Ajv's phrases, each with its words: the first rule that matches says it. */
const RULES: ReadonlyArray<readonly [RegExp, (m: RegExpExecArray, field: string) => string]> = [
  [/^must match pattern /, (_m, field) => PATTERN_WORDS[leafName(field)] ?? 'is not written the way this setting needs'],
  [/^must match format "([^"]+)"$/, (m) => FORMAT_WORDS[m[1] ?? ''] ?? `must be a ${m[1] ?? 'value'} in its usual form`],
  [
    /^must be (integer|number|string|boolean|array|object)(,null)?$/,
    (m) => `${TYPE_WORDS[m[1] ?? ''] ?? 'has the wrong type'}${m[2] !== undefined ? ', or left empty' : ''}`,
  ],
  [/^must be null$/, () => 'must be left empty'],
  [/^must be (>=|<=|>|<) (-?[\d.]+)$/, (m) => `${COMPARE_WORDS[m[1] ?? ''] ?? 'must be'} ${m[2] ?? ''}`],
  [/^must NOT have more than (\d+) characters$/, (m) => `must be at most ${m[1]} characters long`],
  [/^must NOT have fewer than 1 characters$/, () => 'must not be empty'],
  [/^must NOT have fewer than (\d+) characters$/, (m) => `must be at least ${m[1]} characters long`],
  [/^must NOT have more than (\d+) items$/, (m) => `may have at most ${m[1]} lines`],
  [/^must have required property /, () => 'is required'],
  [/^must NOT have additional properties$/, () => 'is not a setting here'],
  [/^must be equal to one of the allowed values$/, () => 'must be one of the choices offered'],
  [/^must NOT have duplicate items$/, () => 'has the same entry twice'],
];

/** One message in words; `field` is the API's dotted path. The server's own sentences pass as they are. */
export function plainMessage(field: string, message: string): string {
  for (const [pattern, words] of RULES) {
    const m = pattern.exec(message);
    if (m !== null) return words(m, field);
  }
  return message;
}

/**
 * Problems of one field, best first: a message Ajv adds beside the real one (`must be null` for
 * a nullable number) is kept only when nothing else was said.
 */
export function bestMessage(messages: readonly string[]): string | undefined {
  return messages.find((m) => !NOISE.some((n) => n.test(m))) ?? messages[0];
}

/**
 * `{field: message}` in words from the API's `[{field, message}]`: each field's best message,
 * and a list's entries (`security.link_domains.2`) also under the list itself as its
 * 1-based line in the form's one-per-line box ("Line 3: must be a domain name …").
 */
export function fieldMessages(issues: ReadonlyArray<{ field: string; message: string }>): Record<string, string> {
  const byField = new Map<string, string[]>();
  for (const { field, message } of issues) byField.set(field, [...(byField.get(field) ?? []), message]);
  const out: Record<string, string> = {};
  const lines = new Map<string, string[]>();
  for (const [field, messages] of byField) {
    const best = bestMessage(messages);
    if (best === undefined) continue;
    const words = plainMessage(field, best);
    out[field] = words;
    const [, list, index] = /^(.+)\.(\d+)$/.exec(field) ?? [];
    if (list !== undefined) lines.set(list, [...(lines.get(list) ?? []), `Line ${Number(index) + 1}: ${words}`]);
  }
  for (const [list, said] of lines) if (out[list] === undefined) out[list] = said.join('; ');
  return out;
}
