import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiFailure } from '../api/client';
import { idTaken, type TakenId } from '../components/id-field';
import { templatesApi, type TemplateResource, type TemplateWrite, type TemplateWritten } from '../api/templates';
import { ParamsSchema } from '../components/params-schema';
import { TemplateFields } from '../components/template-fields';
import { useLeaveGuard } from '../components/template-leave-guard';
import { TemplatePreview } from '../components/template-preview';
import { TemplateSendTest } from '../components/template-send-test';
import { TemplateVersions } from '../components/template-versions';
import { ErrorNotice, Loading, Notice, PageHeader } from '../components/ui';
import { useLoad } from '../components/use-load';
import '../components/template-editor.css';
import { href } from '../lib/route-match';
import type { ParamRow } from '../lib/schema-form';
import {
  changedFields,
  draftFromResource,
  draftSamples,
  draftToWrite,
  emptyDraft,
  formIssues,
  type TemplateDraft,
} from '../lib/template-draft';
import { navigate } from '../router';
import type { PageProps } from './page-props';

/** What "New template" starts from: a body that renders as is (no parameter required, so no schema error). */
const newDraft = (): TemplateDraft => ({ ...emptyDraft(), html: '<p>Hello {{name}}</p>\n', subject: 'Hello {{name}}' });

/**
 * The template editor (`#/orgs/:org/templates/:id`, `new` to create): the template's fields and
 * parameter schema on the left, the live preview (kept in view while the form scrolls), "Send
 * test" and the version history beside them. Saving (the button, Ctrl/Cmd+S) creates with PUT or
 * changes the edited fields with PATCH; the server's 400/422 issues are shown under the fields they
 * name. PUT also replaces, so creating first checks that the id is free. Leaving with unsaved
 * changes asks first (components/template-leave-guard.tsx).
 */
export function TemplateEditor(props: PageProps) {
  const org = props.params.org ?? '';
  const isNew = props.params.id === 'new';
  const loaded = useLoad(async () => {
    const [template, services] = await Promise.all([
      isNew ? Promise.resolve(undefined) : templatesApi.get(org, props.params.id ?? ''),
      templatesApi.services(org).catch(() => []),
    ]);
    return { template, services };
  }, [org, props.params.id]);
  const [draft, setDraft] = useState<TemplateDraft | undefined>();
  const [base, setBase] = useState<TemplateWrite | undefined>();
  const [version, setVersion] = useState<number | undefined>();
  // Whether the stored template has a sample: without one, the generated sample is saved with the next change.
  const [hasSample, setHasSample] = useState(false);

  // Only state setters inside, so one function for the page's life (and the effect below runs on new data only).
  const start = useCallback((d: TemplateDraft, t: TemplateResource | undefined) => {
    setDraft(d);
    setBase(draftToWrite(d, { checkId: false }).write);
    setVersion(t?.version);
    setHasSample(t?.sample_params !== null && t?.sample_params !== undefined);
  }, []);
  const adopt = useCallback((t: TemplateResource) => start(draftFromResource(t), t), [start]);
  useEffect(() => {
    if (loaded.data === undefined) return;
    if (loaded.data.template !== undefined) adopt(loaded.data.template);
    else start(newDraft(), undefined);
  }, [loaded.data, adopt, start]);

  if (loaded.error !== undefined) {
    return (
      <>
        <PageHeader title="Template" />
        <ErrorNotice error={loaded.error} />
        <p>
          <a href={href('orgs', org, 'templates')}>Back to the templates</a>
        </p>
      </>
    );
  }
  if (draft === undefined || loaded.data === undefined) return <Loading />;
  return (
    <Editor
      org={org}
      isNew={isNew}
      draft={draft}
      base={base}
      hasSample={hasSample}
      version={version}
      services={loaded.data.services}
      onDraft={setDraft}
      onSaved={adopt}
    />
  );
}

function Editor(props: {
  org: string;
  isNew: boolean;
  draft: TemplateDraft;
  base: TemplateWrite | undefined;
  hasSample: boolean;
  version: number | undefined;
  services: Awaited<ReturnType<typeof templatesApi.services>>;
  onDraft: (d: TemplateDraft) => void;
  onSaved: (t: TemplateResource) => void;
}) {
  const { org, isNew, draft } = props;
  const [serverIssues, setServerIssues] = useState<Record<string, string>>({});
  const [saveError, setSaveError] = useState<unknown>();
  const [notice, setNotice] = useState<string | undefined>();
  const [warnings, setWarnings] = useState<string[]>([]);
  const [attempted, setAttempted] = useState(false);
  const [saving, setSaving] = useState(false);
  const [taken, setTaken] = useState<TakenId | undefined>();
  const [versionsKey, setVersionsKey] = useState(0);

  const { write, issues: local } = draftToWrite(draft, { checkId: isNew });
  if (!attempted && draft.id === '') delete local.id;
  const issues = { ...serverIssues, ...local };
  const specs = write.params ?? [];
  const samples = draftSamples(draft, specs);
  const changed = props.base === undefined ? write : changedFields(props.base, write);
  const dirty = Object.keys(changed).length > 0;
  const previewId = isNew ? (local.id === undefined && draft.id !== '' ? draft.id : 'new') : draft.id;
  const blocked = Object.keys(local).some((k) => k.startsWith('params.'));
  // A template without a To renders nothing to show (the server says "to is empty"): wait for one, without an error.
  const held = blocked
    ? 'Fix the fields marked above to update the preview.'
    : (write.to ?? '').trim() === ''
      ? 'The preview shows once the template has a To address.'
      : undefined;
  const { guard, dialog } = useLeaveGuard(dirty, () => {
    (document.getElementById('template-form') as HTMLFormElement | null)?.requestSubmit();
  });

  const change = (patch: Partial<TemplateDraft>) => {
    setNotice(undefined);
    if ('id' in patch) setTaken(undefined);
    setServerIssues((current) => {
      const next = { ...current };
      for (const key of Object.keys(next)) {
        if (key in patch || (patch.params !== undefined && key.startsWith('params.'))) delete next[key];
        if (key === 'sample_params' && patch.samples !== undefined) delete next[key];
      }
      return next;
    });
    props.onDraft({ ...draft, ...patch });
  };

  const saved = (t: TemplateWritten, what: string) => {
    setWarnings((t.warnings ?? []).map((w) => w.message));
    props.onSaved(t);
    setNotice(`${what} as version ${t.version}.`);
  };

  const save = async () => {
    if (saving) return;
    setAttempted(true);
    setSaveError(undefined);
    setNotice(undefined);
    setWarnings([]);
    if (Object.keys(local).length > 0 || (isNew && draft.id === '')) {
      setSaveError(new Error('Fix the fields marked in red first.'));
      return;
    }
    const body: TemplateWrite = isNew ? write : { ...changed };
    if (!isNew && Object.keys(body).length === 0) {
      setNotice('No changes to save.');
      return;
    }
    // The generated sample was never stored: it goes with the first change saved.
    if (!isNew && !props.hasSample) body.sample_params = write.sample_params;
    setSaving(true);
    try {
      if (isNew && (await idTaken(() => templatesApi.get(org, draft.id)))) {
        setTaken({ what: 'A template', href: href('orgs', org, 'templates', draft.id) });
        setSaveError(new Error('Nothing was saved: the id is taken.'));
        return;
      }
      const result = isNew ? await templatesApi.create(org, draft.id, write) : await templatesApi.update(org, draft.id, body);
      setServerIssues({});
      if (isNew) {
        // The saved template opens on its own route, with its sample, which was saved with it.
        guard.allowNextMove();
        navigate(href('orgs', org, 'templates', result.id));
        return;
      }
      saved(result, 'Saved');
      setVersionsKey((k) => k + 1);
    } catch (err) {
      setSaveError(err);
      if (err instanceof ApiFailure) setServerIssues(formIssues(err.fieldIssues()));
    } finally {
      setSaving(false);
    }
  };

  return (
    <>
      <PageHeader title={isNew ? 'New template' : `Template ${draft.id}`}>
        {props.version !== undefined && (
          <span class="hint">
            Version {props.version}
            {dirty ? ' · unsaved changes' : ''}
          </span>
        )}
        <a class="btn" href={href('orgs', org, 'templates')}>
          All templates
        </a>
        <button
          type="submit"
          form="template-form"
          class="btn btn-primary"
          disabled={saving}
          aria-busy={saving ? 'true' : undefined}
        >
          {saving ? 'Saving…' : isNew ? 'Create template' : 'Save'}
        </button>
      </PageHeader>
      {notice !== undefined && <Notice kind="ok">{notice}</Notice>}
      {warnings.map((w) => (
        <Notice key={w} kind="info">
          {w}
        </Notice>
      ))}
      <ErrorNotice error={saveError} />
      {dialog}
      <div class="template-editor">
        <form
          id="template-form"
          class="template-form"
          aria-label="Template"
          onSubmit={(e) => {
            e.preventDefault();
            void save();
          }}
        >
          <TemplateFields draft={draft} isNew={isNew} services={props.services} issues={issues} taken={taken} onChange={change} />
          <ParamsSchema rows={draft.params} issues={issues} onRows={(rows: ParamRow[]) => change({ params: rows })} />
        </form>
        <div class="template-side">
          <TemplatePreview
            org={org}
            id={previewId}
            write={write}
            specs={specs}
            samples={samples}
            onSamples={(values) => change({ samples: values })}
            held={held}
            sampleError={issues.sample_params}
          />
          {!isNew && (
            <>
              <TemplateSendTest org={org} id={draft.id} params={write.sample_params ?? {}} unsaved={dirty} />
              <TemplateVersions
                org={org}
                id={draft.id}
                reloadKey={versionsKey}
                unsaved={dirty}
                onRestored={(t) => saved(t, 'Restored')}
              />
            </>
          )}
        </div>
      </div>
    </>
  );
}
