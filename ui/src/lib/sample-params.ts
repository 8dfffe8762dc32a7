/**
 * A template's sample parameters (issue 29): the values the editor's preview and "Send test" use,
 * stored with the template as `sample_params`. When none is stored (a template written before
 * samples were kept, or by a config file without one), a first sample is generated from the
 * parameter schema, so the editor opens on a rendered preview instead of "name is required".
 * Pure, no DOM.
 */
import type { ParamSpec } from '../api/template-types.js';
import type { SampleValues } from './params-form.js';

/** A fixed date, so a generated sample (and the preview it renders) is the same on every open. */
const SAMPLE_DATE = '2026-01-15';

/** `n` clamped into the spec's bounds; integers land on a whole number inside them. */
function bounded(spec: ParamSpec, n: number): number {
  let v = n;
  if (spec.minimum !== undefined && v < spec.minimum) v = spec.type === 'integer' ? Math.ceil(spec.minimum) : spec.minimum;
  if (spec.maximum !== undefined && v > spec.maximum) v = spec.type === 'integer' ? Math.floor(spec.maximum) : spec.maximum;
  return v;
}

/** Text repeated up to min_length and cut to max_length (a parameter's name is never empty). */
function sized(spec: ParamSpec, text: string): string {
  let v = text;
  while (v.length < (spec.min_length ?? 0)) v += text;
  return spec.max_length === undefined ? v : v.slice(0, spec.max_length);
}

/** `name`, `first_name`, `fullName`…: a parameter that holds a person's name. */
const PERSON_NAME = /^(first|full|given|display|user)?[_-]?name$/i;

/** A string sample: "Ada" for a person's name, "example <parameter>" otherwise. */
const placeholder = (name: string): string => (PERSON_NAME.test(name) ? 'Ada' : `example ${name}`);

/**
 * A plausible value of the spec's type that passes its allowed values, lengths and bounds: the
 * first allowed value; a string a person's name ("Ada") when the parameter is a name, else
 * "example <parameter>" (so a preview shows where it lands and reads as a placeholder, not as a
 * template that printed its own variable: "Hi name" looked like a bug), an email ada@example.com,
 * a URL https://example.com/, an integer or number 1, a boolean true, a date 2026-01-15. A
 * `pattern` is not solved for: the preview then shows the issue to fix.
 */
export function sampleValue(spec: ParamSpec): string | number | boolean {
  const first = spec.enum?.[0];
  if (first !== undefined) return first;
  switch (spec.type) {
    case 'integer':
    case 'number':
      return bounded(spec, 1);
    case 'boolean':
      return true;
    case 'email':
      return 'ada@example.com';
    case 'url':
      return 'https://example.com/';
    case 'date':
      return SAMPLE_DATE;
    case 'html':
      return sized(spec, `<strong>${placeholder(spec.name)}</strong>`);
    default:
      return sized(spec, placeholder(spec.name));
  }
}

/** The first sample of a schema: every required parameter with a plausible value; optional ones left out. */
export function generateSample(specs: readonly ParamSpec[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const spec of specs) if (spec.required === true) out[spec.name] = sampleValue(spec);
  return out;
}

/** One stored value as the form's text: strings as they are, numbers and booleans written out, anything else as JSON. */
function asText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

export interface SampleParts {
  /** The declared parameters' values as the form holds them (text per field). */
  values: SampleValues;
  /**
   * Values for names the schema does not declare (a config file's sample for a template that
   * is not strict): kept as they are and written back with the form's, never shown in it.
   */
  extra: Record<string, unknown>;
}

/** A stored sample (or, when none is stored, the generated one) split into the form's values and the rest. */
export function sampleParts(
  specs: readonly ParamSpec[],
  stored: Readonly<Record<string, unknown>> | null | undefined,
): SampleParts {
  const sample = stored ?? generateSample(specs);
  const declared = new Set(specs.map((s) => s.name));
  const values: SampleValues = {};
  const extra: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(sample)) {
    if (!declared.has(name)) extra[name] = value;
    else {
      const text = asText(value);
      if (text !== undefined) values[name] = text;
    }
  }
  return { values, extra };
}
