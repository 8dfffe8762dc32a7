/**
 * The template's own fields: id (new templates only), name, service, addresses, subject, the
 * switches, and the HTML and text bodies in code editors. Each problem the form or the server
 * found is shown under its field (`issues` keyed by form field, lib/template-draft.ts); `taken`
 * says the typed id belongs to an existing template.
 */
import type { FlagField, ServiceSummary } from '../api/templates';
import type { TemplateDraft } from '../lib/template-draft';
import { CodeEditor } from './code-editor';
import { IdField, type TakenId } from './id-field';
import { Checkbox, Field, Section, Select, useId } from './ui';

type Patch = Partial<Omit<TemplateDraft, 'params'>>;

const FLAGS: ReadonlyArray<readonly [FlagField, string]> = [
  ['captcha', 'Require CAPTCHA for public-key sends'],
  ['allow_dynamic_recipients', 'Allow recipients from parameters ({{…}} in To, Cc, Bcc)'],
  ['allow_attachments', 'Allow attachments'],
  ['strict_params', 'Strict parameters (refuse undeclared ones)'],
  ['enforce_link_allowlist', 'Enforce the link allow-list'],
  ['frozen', 'Frozen (the config file does not overwrite it)'],
];

export function TemplateFields(props: {
  draft: TemplateDraft;
  isNew: boolean;
  services: readonly ServiceSummary[];
  issues: Readonly<Record<string, string>>;
  taken?: TakenId | undefined;
  onChange: (patch: Patch) => void;
}) {
  const { draft, issues, onChange } = props;
  const text = (
    field: keyof Patch & string,
    label: string,
    extra: { hint?: string; type?: 'email' | 'text'; required?: boolean } = {},
  ) => (
    <Field
      label={label}
      value={String(draft[field] ?? '')}
      onValue={(v) => onChange({ [field]: v })}
      error={issues[field]}
      {...extra}
    />
  );
  const serviceOptions: Array<readonly [string, string]> = [
    ['', 'Organization default'],
    ...props.services.map((s) => [s.id, `${s.id} (${s.provider}${s.default === true ? ', default' : ''})`] as const),
  ];
  if (draft.service_id !== '' && !props.services.some((s) => s.id === draft.service_id))
    serviceOptions.push([draft.service_id, draft.service_id]);
  return (
    <>
      <Section title="Template">
        <div class="form-row">
          {props.isNew ? (
            <IdField
              label="Template id"
              value={draft.id}
              onValue={(v) => onChange({ id: v })}
              error={issues.id}
              taken={props.taken}
              hint="Used in sends as template_id; cannot change later"
              required
            />
          ) : (
            <Field
              label="Template id"
              value={draft.id}
              onValue={() => undefined}
              readOnly
              hint="Sends name this template by its id; it cannot change."
            />
          )}
          {text('name', 'Name', { hint: 'Left empty: the id' })}
          <Select
            label="Service"
            value={draft.service_id}
            options={serviceOptions}
            onValue={(v) => onChange({ service_id: v })}
            error={issues.service_id}
          />
        </div>
        {text('subject', 'Subject', { required: true })}
        <div class="form-row">
          {text('from_name', 'From name')}
          {text('from_email', 'From email', { hint: "Left empty: the service's" })}
          {text('reply_to', 'Reply-To')}
        </div>
        <div class="form-row">
          {text('to', 'To', { required: true })}
          {text('cc', 'Cc')}
          {text('bcc', 'Bcc')}
        </div>
        <fieldset class="flags">
          <legend>Options</legend>
          {FLAGS.map(([flag, label]) => (
            <Checkbox key={flag} label={label} checked={draft[flag]} onChecked={(v) => onChange({ [flag]: v })} />
          ))}
        </fieldset>
      </Section>
      <Section title="Content">
        <BodyEditor label="HTML" language="html" value={draft.html} error={issues.html} onValue={(v) => onChange({ html: v })} />
        <BodyEditor label="Text" language="text" value={draft.text} error={issues.text} onValue={(v) => onChange({ text: v })} />
      </Section>
    </>
  );
}

function BodyEditor(props: {
  label: string;
  language: 'html' | 'text';
  value: string;
  error: string | undefined;
  onValue: (v: string) => void;
}) {
  const id = useId('body');
  return (
    <div class={`field${props.error !== undefined ? ' has-error' : ''}`}>
      {/* Clicking the label focuses the editor, as a <label for> would for an input; the keyboard reaches the editor by Tab. */}
      {/* biome-ignore lint/a11y/noStaticElementInteractions: a label's click, not a control (as a <label for>). */}
      {/* biome-ignore lint/a11y/useKeyWithClickEvents: the keyboard's way to the editor is Tab; a label takes no keys. */}
      <span
        class="field-label"
        id={`${id}-label`}
        onClick={() => document.querySelector<HTMLElement>(`[aria-labelledby="${id}-label"]`)?.focus()}
      >
        {props.label}
      </span>
      <CodeEditor
        labelledBy={`${id}-label`}
        describedBy={props.error !== undefined ? `${id}-err` : undefined}
        invalid={props.error !== undefined}
        language={props.language}
        value={props.value}
        onValue={props.onValue}
      />
      {props.error !== undefined && (
        <small id={`${id}-err`} class="field-error" role="alert">
          {props.error}
        </small>
      )}
    </div>
  );
}
