import { sampleParamsProblem, templateFields } from '../resources/normalize.js';
import type { TemplateInput } from '../resources/inputs.js';
import type { Template } from '../domain/types.js';
import type { TemplateFields } from '../storage/templates.js';
import type { Repos, Store } from '../storage/store.js';
import { templateProblems } from '../templates/check.js';
import { compileParamsValidator, type ParamIssue } from '../templates/params.js';
import { CONTENT_FIELDS, TEMPLATE_REQUIRED, type TemplatePut } from './routes/bodies.js';
import { fieldPath, invalidFields } from './routes/common.js';
import type { FieldProblem } from './put-patch.js';

type TemplateBody = Omit<TemplatePut, 'id' | 'version' | 'created_at' | 'updated_at'>;

/**
 * A template PUT body (content flat, as the config file writes it, or under `content`, as GET
 * shows it) → the config file's input, once every required field is there. The same field in
 * both places with two values is refused: there is no telling which one was meant.
 */
export function completeTemplateInput(body: TemplateBody): TemplateInput {
  const { content, ...input } = body;
  const problems: FieldProblem[] = [];
  for (const field of CONTENT_FIELDS) {
    const nested = content?.[field];
    if (nested === undefined) continue;
    if (input[field] !== undefined && input[field] !== nested) {
      problems.push({ field: `content.${field}`, message: `differs from the top-level ${field}; give it once` });
    }
    input[field] = nested;
  }
  for (const field of TEMPLATE_REQUIRED) if (input[field] === undefined) problems.push({ field, message: 'is required' });
  if (input.html === undefined && input.text === undefined) problems.push({ field: 'html', message: 'is required (or text)' });
  if (problems.length > 0) throw invalidFields(problems);
  return input;
}

/** The template as a PATCH starts from: GET's body without its read-only fields. */
export function templatePatchBase(t: Template): Record<string, unknown> {
  const { org_id: _o, id: _i, version: _v, created_at: _c, updated_at: _u, ...rest } = t;
  const content: Record<string, string> = {};
  const base: Record<string, unknown> = { ...rest, content };
  for (const field of CONTENT_FIELDS) {
    content[field] = t[field];
    delete base[field];
  }
  return base;
}

/** A PATCH names content flat or under `content`; both are moved under `content` to merge. */
export function nestContent(patch: TemplateBody): Record<string, unknown> {
  const { content, ...rest } = patch;
  const out: Record<string, unknown> = { ...rest };
  const nested: Record<string, string> = {};
  const problems: FieldProblem[] = [];
  for (const field of CONTENT_FIELDS) {
    const flat = rest[field];
    const inner = content?.[field];
    if (flat !== undefined && inner !== undefined && flat !== inner) {
      problems.push({ field: `content.${field}`, message: `differs from the top-level ${field}; give it once` });
    }
    const value = inner ?? flat;
    if (value !== undefined) nested[field] = value;
    delete out[field];
  }
  if (problems.length > 0) throw invalidFields(problems);
  if (Object.keys(nested).length > 0) out.content = nested;
  return out;
}

/**
 * Creates or replaces a template from a complete input: content must be valid Handlebars, the
 * parameter schema satisfiable and `service_id` a service of the organization. Every write
 * stores a version (src/storage/templates.ts), whichever way it came (PUT, PATCH, restore).
 */
export async function putTemplate(
  store: Store,
  orgId: string,
  id: string,
  input: TemplateInput,
): Promise<{ created: boolean; template: Template | undefined }> {
  return putTemplateFields(store, orgId, id, templateFields(id, input));
}

async function putTemplateFields(
  store: Store,
  orgId: string,
  id: string,
  fields: TemplateFields,
): Promise<{ created: boolean; template: Template | undefined }> {
  checkTemplateFields(fields);
  const now = store.clock.now();
  return store.transaction(async (tx) => {
    await checkTemplateService(tx, orgId, fields.service_id);
    const result = await tx.templates.put(orgId, id, fields, now);
    return { created: result === 'created', template: await tx.templates.get(orgId, id) };
  });
}

/** 400 `invalid_body` naming each field a PUT of these fields would be refused for. */
function checkTemplateFields(fields: TemplateFields): void {
  const problems = templateProblems(fields, fields.params).map((p) => ({ field: fieldPath(p.path), message: p.message }));
  const sample = sampleParamsProblem(fields.sample_params);
  if (sample !== undefined) problems.push({ field: 'sample_params', message: sample });
  if (problems.length > 0) throw invalidFields(problems);
}

export interface TemplateWarning {
  code: 'sample_params_mismatch';
  message: string;
  issues: ParamIssue[];
}

/**
 * What a write stored though a send would not take: a sample the parameter schema refuses (issue
 * 29). Stored anyway, since a schema change must never block a save, and said in the answer.
 */
export function templateWarnings(t: Template): TemplateWarning[] {
  if (t.sample_params === null) return [];
  const issues = compileParamsValidator(t.params, t.strict_params)(t.sample_params, 'json');
  if (issues.length === 0) return [];
  const message = `sample_params do not pass the parameter schema: ${issues.map((i) => i.message).join('; ')}`;
  return [{ code: 'sample_params_mismatch', message, issues }];
}

async function checkTemplateService(repos: Pick<Repos, 'services'>, orgId: string, serviceId: string | null): Promise<void> {
  if (serviceId !== null && (await repos.services.get(orgId, serviceId)) === undefined) {
    throw invalidFields([{ field: 'service_id', message: `"${serviceId}" names no service of organization "${orgId}"` }]);
  }
}

/**
 * A stored version written again as a new one. `frozen` stays as it is now: it records a plan
 * downgrade, not content, so restoring an older text must not thaw (or freeze) the template.
 */
export async function restoreTemplate(store: Store, current: Template, fields: TemplateFields): Promise<Template | undefined> {
  const { template } = await putTemplateFields(store, current.org_id, current.id, { ...fields, frozen: current.frozen });
  return template;
}

/** What the render route's `template` may hold: any part of a PATCH body (content flat or under `content`). */
export type TemplateDraft = Omit<TemplateBody, 'id'>;

/**
 * An editor's unsaved edits as the template a send would use: the draft's fields over the stored
 * template, or over a PUT's defaults when `id` is not stored yet. Refused as a PUT of the same
 * fields would be (400 `invalid_body` naming the field), so the preview never renders what
 * could not be saved.
 */
export async function draftTemplate(
  store: Store,
  orgId: string,
  id: string,
  stored: Template | undefined,
  draft: TemplateDraft,
): Promise<Template> {
  const { content, ...flat } = nestContent(draft);
  const edits = { ...flat, ...(content as Record<string, string> | undefined) } as TemplateInput;
  const base: TemplateInput = stored === undefined ? {} : storedFields(stored);
  const fields = templateFields(id, { ...base, ...edits });
  checkTemplateFields(fields);
  await checkTemplateService(store, orgId, fields.service_id);
  const now = store.clock.now();
  return { ...fields, org_id: orgId, id, version: stored?.version ?? 0, created_at: stored?.created_at ?? now, updated_at: now };
}

function storedFields(t: Template): TemplateFields {
  const { org_id: _o, id: _i, version: _v, created_at: _c, updated_at: _u, ...fields } = t;
  return fields;
}
