/**
 * The live preview: the sample parameters form (the template's stored sample, or one generated
 * from its schema: lib/sample-params.ts) and what the server renders from the unsaved draft with
 * them (POST …/render: at once when the editor opens, then ~400 ms after the last change; an
 * older answer arriving late is dropped). The HTML is shown in the shared SandboxedHtml iframe
 * (`sandbox=""`, srcdoc inheriting the UI's strict CSP): no scripts, no same-origin, no forms, no
 * top navigation, no remote images, so a template's HTML can never act in the operator's session.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure } from '../api/client';
import { templatesApi, type ParamSpec, type RenderResult, type TemplateWrite } from '../api/templates';
import { paramIssues, sampleFields, type ParamIssues, type SampleValues } from '../lib/params-form';
import { Envelope } from './message-parts';
import { ParamsSample } from './params-sample';
import { SandboxedHtml } from './sandboxed-html';
import { ErrorNotice, Notice, Section } from './ui';

const DEBOUNCE_MS = 400;

type Outcome =
  | { kind: 'idle' }
  | { kind: 'ok'; result: RenderResult }
  | { kind: 'invalid'; issues: ParamIssues }
  | { kind: 'error'; error: unknown };

/** Renders `write` with the samples after a pause in typing; `held` holds it back (the form has problems, or no To). */
function useRender(org: string, id: string, write: TemplateWrite, params: Record<string, unknown>, held: boolean) {
  const [outcome, setOutcome] = useState<Outcome>({ kind: 'idle' });
  const [busy, setBusy] = useState(false);
  const sequence = useRef(0);
  // Nothing rendered yet: no typing to wait out, so the first render goes at once.
  const rendered = useRef(false);
  // `key` stands for everything the render depends on: `write` and `params` are new objects on each
  // render of the page, so listing them would restart the request (and its debounce) every time.
  const key = JSON.stringify([org, id, write, params]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` is org, id, write and params by value (above).
  useEffect(() => {
    if (held) return undefined;
    const mine = ++sequence.current;
    // Busy from the first change: what is shown no longer matches the draft.
    setBusy(true);
    const delay = rendered.current ? DEBOUNCE_MS : 0;
    const timer = setTimeout(() => {
      rendered.current = true;
      templatesApi
        .render(org, id, { template_params: params, template: write })
        .then(
          (result) => {
            if (mine === sequence.current) setOutcome({ kind: 'ok', result });
          },
          (error: unknown) => {
            if (mine !== sequence.current) return;
            if (error instanceof ApiFailure && error.code === 'invalid_template_params')
              setOutcome({ kind: 'invalid', issues: paramIssues(error.details) });
            else setOutcome({ kind: 'error', error });
          },
        )
        .finally(() => {
          if (mine === sequence.current) setBusy(false);
        });
    }, delay);
    return () => clearTimeout(timer);
  }, [key, held]);
  return { outcome, busy };
}

export function TemplatePreview(props: {
  org: string;
  /** The id to render under (a new template's may not exist yet: the draft stands alone). */
  id: string;
  write: TemplateWrite;
  specs: readonly ParamSpec[];
  samples: SampleValues;
  onSamples: (values: SampleValues) => void;
  /** Why the preview waits (said in words, not as an error), or undefined to render. */
  held: string | undefined;
  /** The server's refusal of the sample as stored (over 64 KiB). */
  sampleError?: string | undefined;
}) {
  // The draft's sample as it would be saved (lib/template-draft.ts), undeclared stored values included.
  const params = props.write.sample_params ?? {};
  const { outcome, busy } = useRender(props.org, props.id, props.write, params, props.held !== undefined);
  const issues = props.held === undefined && outcome.kind === 'invalid' ? outcome.issues : { byParam: {}, summary: [] };
  return (
    <Section title="Preview">
      <h3 class="sub-title">Sample parameters</h3>
      <ParamsSample
        fields={sampleFields(props.specs)}
        values={props.samples}
        issues={issues.byParam}
        onValues={props.onSamples}
      />
      {props.sampleError !== undefined && (
        <p class="field-error" role="alert">
          Sample parameters {props.sampleError}
        </p>
      )}
      <p class="hint preview-status" role="status" aria-live="polite">
        {props.held !== undefined
          ? props.held
          : busy
            ? 'Rendering…'
            : outcome.kind === 'ok'
              ? 'Rendered as a send would be.'
              : ''}
      </p>
      {props.held === undefined && outcome.kind === 'invalid' && (
        <Notice kind="error">
          <strong>The sample parameters do not pass the schema</strong>
          <ul class="issue-list">
            {issues.summary.map((s) => (
              <li key={s}>{s}</li>
            ))}
          </ul>
        </Notice>
      )}
      {props.held === undefined && outcome.kind === 'error' && <RenderError error={outcome.error} />}
      {props.held === undefined && outcome.kind === 'ok' && <Rendered result={outcome.result} stale={busy} />}
    </Section>
  );
}

function RenderError(props: { error: unknown }) {
  const fields = props.error instanceof ApiFailure ? Object.entries(props.error.fieldIssues()) : [];
  return (
    <>
      <ErrorNotice error={props.error} />
      {fields.length > 0 && (
        <ul class="issue-list">
          {fields.map(([f, m]) => (
            <li key={f}>
              <code>{f}</code> {m}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function Rendered(props: { result: RenderResult; stale: boolean }) {
  const r = props.result;
  return (
    <div class={`rendered${props.stale ? ' stale' : ''}`}>
      {(r.warnings ?? []).map((w) => (
        <Notice key={w.code} kind="info">
          {w.message}
        </Notice>
      ))}
      <Envelope
        class="rendered-head"
        subjectTestId="preview-subject"
        subject={r.subject}
        from={r.from}
        to={r.to}
        cc={r.cc}
        bcc={r.bcc}
        replyTo={r.reply_to}
      >
        <dt>Service</dt>
        <dd>{r.service_id}</dd>
      </Envelope>
      {r.html !== null && r.html !== '' && (
        <SandboxedHtml class="preview" title="HTML preview of the rendered email" html={r.html} />
      )}
      {r.text !== null && r.text !== '' && (
        <>
          <h3 class="sub-title">Text</h3>
          {/* Focusable so a keyboard can scroll it; a region, because a <pre> (no role) cannot carry a name. */}
          {/* biome-ignore lint/a11y/useSemanticElements: role region names the scrolling <pre> (a <section> would wrap it). */}
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region is keyboard-reachable (axe). */}
          <pre class="preview-text" tabIndex={0} role="region" aria-label="Text part of the rendered email">
            {r.text}
          </pre>
        </>
      )}
    </div>
  );
}
