import '../components/org-pages.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure } from '../api/client';
import { organizationsApi, type OrganizationPatch, type OrganizationSettings } from '../api/organizations';
import { OrgCredits } from '../components/org-credits';
import { AlertSettingsCard } from '../components/alert-settings';
import { idTaken, type TakenId } from '../components/id-field';
import {
  changedSettings,
  formFromOrganization,
  formProblems,
  NEW_ORG_FORM,
  settingsFromForm,
  type OrgForm,
} from '../components/org-form';
import { OrgSettingsFields } from '../components/org-settings-form';
import { ErrorNotice, Loading, Notice, PageHeader } from '../components/ui';
import { useLoad } from '../components/use-load';
import { formatTime } from '../lib/format';
import { href } from '../lib/route-match';
import { navigate } from '../router';
import { FieldFailure } from '../components/field-failure';
import type { PageProps } from './page-props';

/**
 * `#/orgs/new` creates an organization (PUT, every setting), `#/orgs/:org/settings` edits one
 * (PATCH with the settings changed since load) and tops up its credits. Field errors from the
 * server show beside their fields. PUT also replaces, so creating first checks the id is free.
 */
export function OrganizationEdit(props: PageProps) {
  const creating = props.params.org === undefined || props.params.org === 'new';
  const org = creating ? '' : (props.params.org as string);
  const loaded = useLoad(() => (creating ? Promise.resolve(undefined) : organizationsApi.get(org)), [org]);
  const [form, setForm] = useState<OrgForm>({ ...NEW_ORG_FORM });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>();
  const [saved, setSaved] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [taken, setTaken] = useState<TakenId | undefined>();
  // The settings as loaded (or last saved): a save sends only what differs from them.
  const [base, setBase] = useState<OrganizationSettings | undefined>();
  // Filled once: a reload after a top-up must not undo edits not saved yet.
  const filled = useRef(false);
  useEffect(() => {
    if (loaded.data === undefined || filled.current) return;
    filled.current = true;
    const f = formFromOrganization(loaded.data);
    setForm(f);
    setBase(settingsFromForm(f, false));
  }, [loaded.data]);

  const set = <K extends keyof OrgForm>(key: K, value: OrgForm[K]) => {
    if (key === 'id') setTaken(undefined);
    setForm((f) => ({ ...f, [key]: value }));
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    setSaved(undefined);
    setFailure(undefined);
    setTaken(undefined);
    const local = formProblems(form, creating);
    setErrors(local);
    if (Object.keys(local).length > 0) return;
    setBusy(true);
    try {
      const body = settingsFromForm(form, creating);
      if (creating) {
        if (await idTaken(() => organizationsApi.get(form.id))) {
          setTaken({ what: 'An organization', href: href('orgs', form.id, 'settings') });
          return;
        }
        await organizationsApi.create(form.id, body);
        navigate(href('orgs', form.id, 'settings'));
        return;
      }
      // Editing, settingsFromForm names credits by the mode's word, never a balance: a PATCH body as it is.
      const changes = base === undefined ? (body as OrganizationPatch) : changedSettings(base, body);
      if (Object.keys(changes).length === 0) {
        setSaved('No changes to save.');
        return;
      }
      const updated = await organizationsApi.update(org, changes);
      const f = formFromOrganization(updated);
      setForm(f);
      setBase(settingsFromForm(f, false));
      setSaved(`Saved at ${formatTime(updated.updated_at)}.`);
      // The credits card shows what was loaded: a change of mode, or holds released, show at once.
      if ('credits' in changes) void loaded.reload();
    } catch (err) {
      if (err instanceof ApiFailure) setErrors(err.fieldIssues());
      setFailure(err);
    } finally {
      setBusy(false);
    }
  };

  if (!creating && loaded.data === undefined) return loaded.loading ? <Loading /> : <ErrorNotice error={loaded.error} />;
  return (
    <>
      <PageHeader title={creating ? 'New organization' : `Settings of ${org}`}>
        {!creating && (
          <a class="btn btn-plain" href={href('orgs', org)}>
            Overview
          </a>
        )}
      </PageHeader>
      {!creating && loaded.data !== undefined && (
        <OrgCredits org={org} credits={loaded.data.credits} held={loaded.data.held} onChanged={() => void loaded.reload()} />
      )}
      <form onSubmit={submit} aria-label={creating ? 'New organization' : 'Organization settings'} noValidate>
        <OrgSettingsFields form={form} set={set} creating={creating} errors={errors} taken={taken} />
        {saved !== undefined && <Notice kind="ok">{saved}</Notice>}
        <FieldFailure error={failure} />
        <div class="org-form-actions">
          <button class="btn btn-primary" type="submit" disabled={busy}>
            {creating ? 'Create organization' : 'Save settings'}
          </button>
        </div>
      </form>
      {!creating && <AlertSettingsCard org={org} />}
    </>
  );
}
