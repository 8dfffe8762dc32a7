/**
 * The editor's state (pure, no DOM): a template as the form holds it, and what it becomes for
 * save (PUT creates, PATCH updates) and for the live preview (the render route's `template`).
 * Server field names (`content.subject`, `params.0.name`) are mapped onto the form's fields.
 * The sample parameters are part of the template (`sample_params`, issue 29): saved with it, so
 * an edit of the sample is an unsaved change like any other.
 */
import {
  CONTENT_FIELDS,
  FLAG_FIELDS,
  type ContentField,
  type FlagField,
  type ParamSpec,
  type TemplateResource,
  type TemplateWrite,
} from '../api/template-types.js';
import { carrySamples, sampleParams, type SampleValues } from './params-form.js';
import { reservedIdProblem } from './resource-id.js';
import { sampleParts } from './sample-params.js';
import { rowsFromSpecs, rowsToSpecs, type ParamRow } from './schema-form.js';

export interface TemplateDraft extends Record<ContentField, string>, Record<FlagField, boolean> {
  /** The template id (editable only before the first save). */
  id: string;
  name: string;
  /** '' means the organization's default service (null in the API). */
  service_id: string;
  params: ParamRow[];
  /** The preview's sample values as typed, by parameter name (lib/params-form.ts). */
  samples: SampleValues;
  /** Stored sample values of names the schema does not declare: written back unchanged (lib/sample-params.ts). */
  sample_extra: Record<string, unknown>;
}

const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export function emptyDraft(): TemplateDraft {
  return {
    id: '',
    name: '',
    service_id: '',
    params: [],
    samples: {},
    sample_extra: {},
    subject: '',
    to: '',
    cc: '',
    bcc: '',
    from_name: '',
    from_email: '',
    reply_to: '',
    html: '',
    text: '',
    captcha: false,
    allow_dynamic_recipients: false,
    allow_attachments: false,
    strict_params: false,
    enforce_link_allowlist: false,
    frozen: false,
  };
}

/** The template as the form holds it; without a stored sample, one generated from the schema (lib/sample-params.ts). */
export function draftFromResource(t: TemplateResource): TemplateDraft {
  const sample = sampleParts(t.params, t.sample_params);
  const draft: TemplateDraft = {
    ...emptyDraft(),
    id: t.id,
    name: t.name,
    service_id: t.service_id ?? '',
    params: rowsFromSpecs(t.params),
    samples: sample.values,
    sample_extra: sample.extra,
  };
  for (const f of CONTENT_FIELDS) draft[f] = t.content[f] ?? '';
  for (const f of FLAG_FIELDS) draft[f] = t[f] === true;
  return draft;
}

/** The sample values of the parameters `specs` declares: kept where typed, a new parameter's empty (or its one allowed value). */
export function draftSamples(draft: TemplateDraft, specs: readonly ParamSpec[]): SampleValues {
  return carrySamples(specs, draft.samples);
}

/**
 * The draft as a write: every field the PUT requires, content flat, and the sample as a send's
 * JSON would carry it. Also the form's own problems (id, the parameter rows), keyed like the
 * server's field names; a write with problems is still usable for the preview, minus the
 * parameters the rows could not express.
 */
export function draftToWrite(
  draft: TemplateDraft,
  options: { checkId: boolean },
): { write: TemplateWrite; issues: Record<string, string> } {
  const { specs, issues } = rowsToSpecs(draft.params);
  if (options.checkId && !ID.test(draft.id)) issues.id = 'must be 1–64 of A–Z a–z 0–9 _ . - starting with a letter or digit';
  else if (options.checkId && reservedIdProblem(draft.id) !== undefined) issues.id = reservedIdProblem(draft.id) as string;
  const write: TemplateWrite = {
    name: draft.name.trim() === '' ? draft.id : draft.name,
    service_id: draft.service_id === '' ? null : draft.service_id,
    params: specs,
    sample_params: { ...draft.sample_extra, ...sampleParams(specs, draftSamples(draft, specs)) },
  };
  for (const f of CONTENT_FIELDS) write[f] = draft[f];
  for (const f of FLAG_FIELDS) write[f] = draft[f];
  return { write, issues };
}

/** The fields of `next` that differ from `base` (what a PATCH needs); `params` compares whole. */
export function changedFields(base: TemplateWrite, next: TemplateWrite): TemplateWrite {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(next)) {
    if (JSON.stringify(value) !== JSON.stringify((base as Record<string, unknown>)[key])) out[key] = value;
  }
  return out as TemplateWrite;
}

/**
 * A server field name → the form field it is about: `content.html` and `template.html` →
 * `html`; `params.2.pattern` stays (the schema rows use the same keys); `params.2` → the row's
 * name field, since the problem (min over max…) concerns the row as a whole.
 */
export function formField(serverField: string): string {
  let f = serverField.replace(/^(template\.|body\.)/, '').replace(/^content\./, '');
  // A sample too large to store is about the sample parameters the preview shows.
  if (f.startsWith('sample_params')) return 'sample_params';
  if (/^params\.\d+$/.test(f)) f = `${f}.name`;
  return f;
}

/** ApiFailure.fieldIssues() → issues keyed by form field (the first per field kept). */
export function formIssues(fieldIssues: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, message] of Object.entries(fieldIssues)) {
    const key = formField(field);
    out[key] = out[key] === undefined ? message : `${out[key]}; ${message}`;
  }
  return out;
}
