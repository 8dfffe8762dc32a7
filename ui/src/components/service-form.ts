/**
 * The service form: which fields each provider's block has and the `events` settings of each
 * source, derived from the server's provider descriptors (src/providers/: schema, secrets,
 * labels), the form's values as inputs hold them, and the PUT body they make. Pure:
 * unit-tested in test/ui/service-form.test.ts.
 *
 * Secrets are write-only: the form starts them empty. A secret typed is sent; one left empty
 * while a value is stored is sent as the API's mask "********", which keeps the stored value
 * (and is refused, naming the field, when its destination changed: then it must be typed);
 * one left empty with nothing stored is left out. PUT rather than PATCH, so that clearing an
 * optional field clears it.
 */
import type { TSchema } from '@sinclair/typebox';
import type { FieldLabel } from '../../../src/providers/descriptor.js';
import { descriptorOf, WEBHOOK_SOURCES, type WebhookSource } from '../../../src/providers/index.js';
import { SECRET_MASK } from '../../../src/providers/schema.js';
import { PROVIDERS, type Provider, type Service } from '../api/service-types.js';
import { reservedIdProblem } from '../lib/resource-id.js';

export { SECRET_MASK };

export interface FieldSpec {
  /** Dotted path in the resource: `smtp.host`, `events.secret`. */
  path: string;
  label: string;
  /** `services`: an ordered list of other services' ids, picked (failover); sent as a list. */
  kind: 'text' | 'number' | 'secret' | 'checkbox' | 'list' | 'select' | 'services';
  options?: ReadonlyArray<readonly [string, string]>;
  required?: boolean;
  hint?: string;
  /**
   * The settings object inside the provider's block the field belongs to (its schema's `title`,
   * e.g. SMTP's "DKIM signing"): the form shows each apart from the connection (issue 29).
   */
  group?: string;
}

interface Fields {
  properties: Readonly<Record<string, TSchema>>;
  required: readonly string[];
  secrets: readonly string[];
  labels: Readonly<Record<string, FieldLabel>>;
}

/**
 * One field per leaf of a schema, in its order (an object such as `dkim` is its fields,
 * `dkim.domain_name`, …): a secret, a checkbox (boolean), a number, a list (array, one per
 * line), a select (a union of literals) or text; required when every level of it is.
 */
function specs(fields: Fields, prefix = '', parentRequired = true, group?: string): FieldSpec[] {
  return Object.entries(fields.properties).flatMap(([name, schema]): FieldSpec[] => {
    const path = `${prefix}${name}`;
    const required = parentRequired && fields.required.includes(name);
    if (schema.type === 'object' && schema.properties !== undefined) {
      return specs(
        {
          ...fields,
          properties: schema.properties as Record<string, TSchema>,
          required: (schema.required as string[] | undefined) ?? [],
        },
        `${path}.`,
        required,
        group ?? (typeof schema.title === 'string' ? schema.title : path),
      );
    }
    const label = fields.labels[path];
    const kind: FieldSpec['kind'] = fields.secrets.includes(path)
      ? 'secret'
      : schema.type === 'boolean'
        ? 'checkbox'
        : schema.type === 'integer' || schema.type === 'number'
          ? 'number'
          : schema.type === 'array'
            ? 'list'
            : Array.isArray(schema.anyOf)
              ? 'select'
              : 'text';
    const options =
      kind === 'select'
        ? (schema.anyOf as TSchema[]).map((o) => String(o.const)).map((v) => [v, label?.options?.[v] ?? v] as const)
        : undefined;
    return [
      {
        path,
        label: label?.label ?? path,
        kind,
        ...(options === undefined ? {} : { options }),
        ...(required ? { required } : {}),
        ...(label?.hint === undefined ? {} : { hint: label.hint }),
        ...(group === undefined ? {} : { group }),
      },
    ];
  });
}

/** `{ name: value }` for each name. */
const table = <K extends string, V>(names: readonly K[], value: (name: K) => V): Readonly<Record<K, V>> =>
  Object.fromEntries(names.map((n) => [n, value(n)])) as Record<K, V>;

/** Each provider's block, field paths relative to the block. */
export const PROVIDER_FIELDS: Readonly<Record<Provider, readonly FieldSpec[]>> = table(PROVIDERS, (name) => {
  const block = descriptorOf(name)?.settings;
  return block === undefined
    ? []
    : specs({
        properties: block.schema.properties,
        required: block.schema.required ?? [],
        secrets: block.secrets,
        labels: block.labels,
      });
});

/** Settings every service has, besides its provider block. */
export const COMMON_FIELDS: readonly FieldSpec[] = [
  { path: 'from_email', label: 'Default from address', kind: 'text' },
  { path: 'from_name', label: 'Default from name', kind: 'text' },
  { path: 'max_per_second', label: 'Most messages per second', kind: 'number', hint: 'Empty: no pacing.' },
  {
    path: 'failover',
    label: 'Failover services',
    kind: 'services',
    hint: "Other services of the organization, tried in this order while this one's breaker is open.",
  },
  {
    path: 'failover_on_service_error',
    label: 'Also fail over on a service error (authentication, unverified sender)',
    kind: 'checkbox',
  },
];

/** SMTP only: VERP bounces and feedback loops through the inbound listener. */
export const SMTP_EXTRA_FIELDS: readonly FieldSpec[] = [
  {
    path: 'bounce_domain',
    label: 'Bounce domain',
    kind: 'text',
    hint: 'Envelope sender bounce+<token>@<domain>; its MX points at mailroom.',
  },
  { path: 'complaint_address', label: 'Complaint address', kind: 'text' },
];

export const EVENT_SOURCES: readonly WebhookSource[] = WEBHOOK_SOURCES;

/** The `events` block's settings per source (README "Provider events intake"). */
export const EVENT_FIELDS: Readonly<Record<WebhookSource, readonly FieldSpec[]>> = table(EVENT_SOURCES, (name) => {
  const events = descriptorOf(name)?.events;
  return events === undefined
    ? []
    : specs(
        {
          properties: events.fields,
          required: events.required,
          secrets: events.secrets.map((s) => `events.${s}`),
          labels: Object.fromEntries(Object.entries(events.labels).map(([field, label]) => [`events.${field}`, label])),
        },
        'events.',
      );
});

export type FormValues = Record<string, string | boolean>;

export interface ServiceForm {
  id: string;
  provider: Provider;
  default: boolean;
  /** '' for no events block. */
  events_source: string;
  values: FormValues;
  /** Paths of secrets stored on the server (the resource shows their mask). */
  stored: ReadonlySet<string>;
}

export const newServiceForm = (): ServiceForm => ({
  id: '',
  provider: 'smtp',
  default: false,
  events_source: '',
  values: { 'smtp.port': '587' },
  stored: new Set(),
});

/** The fields the form shows for a provider and events source, paths absolute. */
export function visibleFields(provider: Provider, eventsSource: string): FieldSpec[] {
  const block = PROVIDER_FIELDS[provider].map((f) => ({ ...f, path: `${provider}.${f.path}` }));
  const events = (EVENT_FIELDS as Record<string, readonly FieldSpec[]>)[eventsSource] ?? [];
  return [...block, ...COMMON_FIELDS, ...(provider === 'smtp' ? SMTP_EXTRA_FIELDS : []), ...events];
}

function read(obj: unknown, path: string): unknown {
  let at = obj;
  for (const part of path.split('.'))
    at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[part] : undefined;
  return at;
}

function write(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let at = obj;
  for (const part of parts.slice(0, -1)) {
    if (typeof at[part] !== 'object' || at[part] === null) at[part] = {};
    at = at[part] as Record<string, unknown>;
  }
  at[parts[parts.length - 1] as string] = value;
}

/** Every field any provider or source may show, absolute paths. */
const ALL_FIELDS: FieldSpec[] = [
  ...Object.entries(PROVIDER_FIELDS).flatMap(([p, fields]) => fields.map((f) => ({ ...f, path: `${p}.${f.path}` }))),
  ...COMMON_FIELDS,
  ...SMTP_EXTRA_FIELDS,
  ...Object.values(EVENT_FIELDS).flat(),
];

export function formFromService(s: Service): ServiceForm {
  const values: FormValues = {};
  const stored = new Set<string>();
  for (const f of ALL_FIELDS) {
    const v = read(s, f.path);
    if (f.kind === 'secret') {
      if (v === SECRET_MASK) stored.add(f.path);
      values[f.path] = '';
    } else if (f.kind === 'checkbox') values[f.path] = v === true;
    else if (f.kind === 'list' || f.kind === 'services') values[f.path] = Array.isArray(v) ? v.join('\n') : '';
    else if (v !== undefined && v !== null) values[f.path] = String(v);
  }
  return { id: s.id, provider: s.provider, default: s.default, events_source: s.events?.source ?? '', values, stored };
}

/** Form problems found before asking the server, keyed by path. */
export function serviceFormProblems(f: ServiceForm, creating: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  if (creating && !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(f.id))
    out.id = '1 to 64 of A-Z a-z 0-9 _ . - (starting with a letter or digit)';
  else if (creating && reservedIdProblem(f.id) !== undefined) out.id = reservedIdProblem(f.id) as string;
  for (const field of visibleFields(f.provider, f.events_source)) {
    const v = f.values[field.path];
    const empty = v === undefined || v === '';
    if (field.required === true && empty && !(field.kind === 'secret' && f.stored.has(field.path)))
      out[field.path] = 'is required';
    if (field.kind === 'number' && !empty && !Number.isFinite(Number(v))) out[field.path] = 'must be a number';
    if (field.kind === 'services') {
      const ids = pickedServices(typeof v === 'string' ? v : '');
      if (ids.includes(f.id)) out[field.path] = 'cannot name this service itself';
      else if (new Set(ids).size < ids.length) out[field.path] = 'names a service twice';
      else if (ids.includes('')) out[field.path] = 'has an empty choice: pick a service or remove it';
    }
  }
  return out;
}

/** The PUT body: the provider's block, the common settings, the events block; secrets as described above. */
export function serviceBody(f: ServiceForm): Record<string, unknown> {
  const body: Record<string, unknown> = { provider: f.provider, default: f.default };
  // Its block, even when every field is left empty (the server then names what is missing); the outbox has none.
  if (descriptorOf(f.provider)?.settings !== undefined) body[f.provider] = {};
  for (const field of visibleFields(f.provider, f.events_source)) {
    const v = f.values[field.path];
    if (field.kind === 'checkbox') {
      if (v === true) write(body, field.path, true);
      else if (field.path.endsWith('.secure') || field.path === 'failover_on_service_error') write(body, field.path, false);
      continue;
    }
    const text = typeof v === 'string' ? v : '';
    if (field.kind === 'secret') {
      if (text !== '') write(body, field.path, text);
      else if (f.stored.has(field.path)) write(body, field.path, SECRET_MASK);
      continue;
    }
    if (text.trim() === '') continue;
    if (field.kind === 'number') write(body, field.path, Number(text));
    else if (field.kind === 'services') write(body, field.path, pickedServices(text));
    else if (field.kind === 'list')
      write(
        body,
        field.path,
        text
          .split(/[\n,]/)
          .map((s) => s.trim())
          .filter((s) => s !== ''),
      );
    else write(body, field.path, text.trim());
  }
  const dkim = read(body, 'smtp.dkim');
  // DKIM is all three or nothing: a form with only the (masked) key left is no DKIM.
  if (
    typeof dkim === 'object' &&
    dkim !== null &&
    read(dkim, 'domain_name') === undefined &&
    read(dkim, 'key_selector') === undefined
  ) {
    delete (body.smtp as Record<string, unknown>).dkim;
  }
  if (f.events_source !== '') write(body, 'events.source', f.events_source);
  return body;
}

/**
 * A `services` field's value as the pickers hold it: the ids in order, one per line (the same
 * text a list field holds, so a form loaded before keeps its value). An empty line is a picker
 * not chosen yet.
 */
export const pickedServices = (text: string): string[] => (text === '' ? [] : text.split('\n').map((s) => s.trim()));
export const servicesText = (ids: readonly string[]): string => ids.join('\n');
