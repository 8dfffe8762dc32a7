import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiFailure } from '../api/client';
import { idTaken, type TakenId } from '../components/id-field';
import { templatesApi, type TemplateResource, type TemplateWrite } from '../api/templates';
import { ParamsSchema } from '../components/params-schema';
import { TemplateFields } from '../components/template-fields';
import { TemplatePreview } from '../components/template-preview';
import { TemplateSendTest } from '../components/template-send-test';
import { TemplateVersions } from '../components/template-versions';
import { ErrorNotice, Loading, Notice, PageHeader } from '../components/ui';
import { useLoad } from '../components/use-load';
import '../components/template-editor.css';
import { carrySamples, sampleParams, type SampleValues } from '../lib/params-form';
import { href } from '../lib/route-match';
import type { ParamRow } from '../lib/schema-form';
import {
  changedFields,
  draftFromResource,
  draftToWrite,
  emptyDraft,
  formIssues,
  type TemplateDraft,
} from '../lib/template-draft';
import { navigate } from '../router';
import type { PageProps } from './page-props';

/**
 * Sample values typed while creating a template, handed to the editor that opens once it is
 * saved (the page remounts on the new route). Memory only: samples may hold real addresses.
 */
const carriedSamples = new Map<string, SampleValues>();

/**
 * The template editor (`#/orgs/:org/templates/:id`, `new` to create): the template's fields and
 * parameter schema on the left, the live preview, "Send test" and the version history beside
 * them. Saving creates with PUT or changes the edited fields with PATCH; the server's 400/422
 * issues are shown under the fields they name. PUT also replaces, so creating first checks that
 * the id is free.
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

  // Only state setters inside, so one function for the page's life (and the effect below runs on new data only).
  const adopt = useCallback((t: TemplateResource) => {
    const d = draftFromResource(t);
    setDraft(d);
    setBase(draftToWrite(d, { checkId: false }).write);
    setVersion(t.version);
  }, []);
  useEffect(() => {
    if (loaded.data === undefined) return;
    if (loaded.data.template !== undefined) adopt(loaded.data.template);
    else setDraft({ ...emptyDraft(), html: '<p>Hello {{name}}</p>\n', subject: 'Hello {{name}}' });
  }, [loaded.data, adopt]);

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
  version: number | undefined;
  services: Awaited<ReturnType<typeof templatesApi.services>>;
  onDraft: (d: TemplateDraft) => void;
  onSaved: (t: TemplateResource) => void;
}) {
  const { org, isNew, draft } = props;
  const [serverIssues, setServerIssues] = useState<Record<string, string>>({});
  const [saveError, setSaveError] = useState<unknown>();
  const [notice, setNotice] = useState<string | undefined>();
  const [attempted, setAttempted] = useState(false);
  const [saving, setSaving] = useState(false);
  const [taken, setTaken] = useState<TakenId | undefined>();
  const [rawSamples, setRawSamples] = useState<SampleValues>(() => {
    const carried = carriedSamples.get(`${org}/${draft.id}`) ?? {};
    carriedSamples.clear();
    return carried;
  });
  const [versionsKey, setVersionsKey] = useState(0);

  const { write, issues: local } = draftToWrite(draft, { checkId: isNew });
  if (!attempted && draft.id === '') delete local.id;
  const issues = { ...serverIssues, ...local };
  const specs = write.params ?? [];
  const samples = carrySamples(specs, rawSamples);
  const dirty = props.base === undefined || Object.keys(changedFields(props.base, write)).length > 0;
  const previewId = isNew ? (local.id === undefined && draft.id !== '' ? draft.id : 'new') : draft.id;
  const blocked = Object.keys(local).some((k) => k.startsWith('params.'));

  const change = (patch: Partial<TemplateDraft>) => {
    setNotice(undefined);
    if ('id' in patch) setTaken(undefined);
    setServerIssues((current) => {
      const next = { ...current };
      for (const key of Object.keys(next)) {
        if (key in patch || (patch.params !== undefined && key.startsWith('params.'))) delete next[key];
      }
      return next;
    });
    props.onDraft({ ...draft, ...patch });
  };

  const save = async () => {
    setAttempted(true);
    setSaveError(undefined);
    setNotice(undefined);
    if (Object.keys(local).length > 0 || (isNew && draft.id === '')) {
      setSaveError(new Error('Fix the fields marked in red first.'));
      return;
    }
    const body = isNew || props.base === undefined ? write : changedFields(props.base, write);
    if (!isNew && Object.keys(body).length === 0) {
      setNotice('No changes to save.');
      return;
    }
    setSaving(true);
    try {
      if (isNew && (await idTaken(() => templatesApi.get(org, draft.id)))) {
        setTaken({ what: 'A template', href: href('orgs', org, 'templates', draft.id) });
        setSaveError(new Error('Nothing was saved: the id is taken.'));
        return;
      }
      const saved = isNew ? await templatesApi.create(org, draft.id, write) : await templatesApi.update(org, draft.id, body);
      setServerIssues({});
      if (isNew) {
        carriedSamples.set(`${org}/${saved.id}`, samples);
        navigate(href('orgs', org, 'templates', saved.id));
        return;
      }
      props.onSaved(saved);
      setVersionsKey((k) => k + 1);
      setNotice(`Saved as version ${saved.version}.`);
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
      <ErrorNotice error={saveError} />
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
            onSamples={setRawSamples}
            blocked={blocked}
          />
          {!isNew && (
            <>
              <TemplateSendTest org={org} id={draft.id} params={sampleParams(specs, samples)} unsaved={dirty} />
              <TemplateVersions
                org={org}
                id={draft.id}
                reloadKey={versionsKey}
                onRestored={(t) => {
                  props.onSaved(t);
                  setNotice(`Restored as version ${t.version}.`);
                }}
              />
            </>
          )}
        </div>
      </div>
    </>
  );
}
