import '../components/org-pages.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure } from '../api/client';
import { PROVIDERS, servicesApi, type Provider, type Service } from '../api/services';
import { IdField, idTaken, type TakenId } from '../components/id-field';
import { ServiceEventsUrl } from '../components/service-events-url';
import { ServiceField } from '../components/service-fields';
import {
  EVENT_SOURCES,
  formFromService,
  newServiceForm,
  serviceBody,
  serviceFormProblems,
  visibleFields,
  type ServiceForm,
} from '../components/service-form';
import { ServiceDeleteDialog } from '../components/service-delete';
import { ServiceTestPanel } from '../components/service-test';
import { useLeaveGuard } from '../components/template-leave-guard';
import { Badge, Checkbox, ErrorNotice, Field, Loading, Notice, PageHeader, Section, Select } from '../components/ui';
import { useLoad } from '../components/use-load';
import { formatTime } from '../lib/format';
import { href } from '../lib/route-match';
import { navigate } from '../router';
import { FieldFailure } from '../components/field-failure';
import type { PageProps } from './page-props';

/**
 * `#/orgs/:org/services/:id` edits a service (`new` creates one): the provider's own fields,
 * secrets write-only, a Test button, and the events URL to give the provider. The save is a
 * PUT, which also replaces: creating first checks that the id is free.
 *
 * Issue 29: the provider's connection and each settings group of its block (SMTP's "DKIM
 * signing") are sections of their own; failover is a list of pickers of the other services; an
 * existing service's provider is shown read-only (the API refuses a change); signing out with
 * unsaved edits asks first, and so does leaving the form (components/template-leave-guard.tsx).
 */
export function ServiceEdit(props: PageProps) {
  const org = props.params.org as string;
  const creating = props.params.id === 'new';
  const id = props.params.id as string;
  const loaded = useLoad(() => (creating ? Promise.resolve(undefined) : servicesApi.get(org, id)), [org, id]);
  // The failover pickers' choices; best effort (a failed list leaves only what is stored).
  const others = useLoad(() => servicesApi.ids(org), [org]);
  const [form, setForm] = useState<ServiceForm>(newServiceForm);
  const [current, setCurrent] = useState<Service | undefined>();
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>();
  const [saved, setSaved] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [taken, setTaken] = useState<TakenId | undefined>();
  const [deleting, setDeleting] = useState(false);
  const filled = useRef(false);
  useEffect(() => {
    if (loaded.data === undefined || filled.current) return;
    filled.current = true;
    setCurrent(loaded.data);
    setForm(formFromService(loaded.data));
  }, [loaded.data]);

  const setValue = (path: string, v: string | boolean) => setForm((f) => ({ ...f, values: { ...f.values, [path]: v } }));
  // Unsaved: the body a save would send differs from the stored service's (or, creating, from an untouched form's).
  const unsavedBody = (): Record<string, unknown> | undefined => {
    const body = serviceBody(form);
    const saved = current === undefined ? undefined : serviceBody(formFromService(current));
    return saved !== undefined && JSON.stringify(saved) === JSON.stringify(body) ? undefined : body;
  };
  const dirty = creating
    ? form.id !== '' || JSON.stringify(serviceBody(form)) !== JSON.stringify(serviceBody(newServiceForm()))
    : current !== undefined && unsavedBody() !== undefined;
  // The template editor's guard (issue 29): in-app links and Back ask, reload gets the browser's
  // prompt, Ctrl/Cmd+S saves, sign-out asks.
  const { guard, dialog } = useLeaveGuard(
    dirty,
    () => (document.getElementById('service-form') as HTMLFormElement | null)?.requestSubmit(),
    creating ? 'This new service' : 'This service',
  );
  const submit = async (e: Event) => {
    e.preventDefault();
    // Ctrl+S while a save is under way: one save at a time.
    if (busy) return;
    setSaved(undefined);
    setFailure(undefined);
    setTaken(undefined);
    const local = serviceFormProblems(form, creating);
    setErrors(local);
    if (Object.keys(local).length > 0) return;
    setBusy(true);
    try {
      if (creating && (await idTaken(() => servicesApi.get(org, form.id)))) {
        setTaken({ what: 'A service', href: href('orgs', org, 'services', form.id) });
        return;
      }
      const service = await servicesApi.create(org, creating ? form.id : id, serviceBody(form));
      if (creating) {
        guard.allowNextMove();
        navigate(href('orgs', org, 'services', service.id));
        return;
      }
      setCurrent(service);
      setForm(formFromService(service));
      setSaved(`Saved (version ${service.version}) at ${formatTime(service.updated_at)}.`);
    } catch (err) {
      if (err instanceof ApiFailure) setErrors(err.fieldIssues());
      setFailure(err);
    } finally {
      setBusy(false);
    }
  };

  if (!creating && current === undefined) return loaded.error !== undefined ? <ErrorNotice error={loaded.error} /> : <Loading />;
  const fields = visibleFields(form.provider, form.events_source);
  const providerFields = fields.filter((f) => f.path.startsWith(`${form.provider}.`));
  const connectionFields = providerFields.filter((f) => f.group === undefined);
  const groups = [...new Set(providerFields.flatMap((f) => (f.group === undefined ? [] : [f.group])))];
  const eventFields = fields.filter((f) => f.path.startsWith('events.'));
  const commonFields = fields.filter((f) => !providerFields.includes(f) && !eventFields.includes(f));
  const selfId = creating ? form.id : id;
  const otherServices = (others.data ?? []).filter((s) => s !== selfId);
  const field = (spec: (typeof fields)[number]) => (
    <ServiceField
      key={spec.path}
      spec={spec}
      values={form.values}
      stored={form.stored.has(spec.path)}
      error={errors[spec.path]}
      onValue={setValue}
      services={otherServices}
    />
  );
  // Inputs side by side, then pickers (failover) and checkboxes each on their own line under them.
  const group = (specs: typeof fields) => (
    <>
      <div class="form-row">{specs.filter((f) => f.kind !== 'checkbox' && f.kind !== 'services').map(field)}</div>
      {specs.filter((f) => f.kind === 'services').map(field)}
      {specs.filter((f) => f.kind === 'checkbox').map(field)}
    </>
  );
  return (
    <>
      <PageHeader title={creating ? 'New service' : `Service ${id}`}>
        {current?.breaker !== undefined && (
          <span>
            Breaker <Badge value={current.breaker.state} />
          </span>
        )}
        <a class="btn btn-plain" href={href('orgs', org, 'services')}>
          All services
        </a>
        {!creating && (
          <button type="button" class="btn btn-danger" onClick={() => setDeleting(true)}>
            Delete…
          </button>
        )}
      </PageHeader>
      {deleting && (
        <ServiceDeleteDialog
          org={org}
          id={id}
          onClose={() => setDeleting(false)}
          onDeleted={() => {
            guard.allowNextMove();
            navigate(href('orgs', org, 'services'));
          }}
        />
      )}
      <ServiceTestPanel org={org} id={creating ? undefined : id} unsaved={unsavedBody} />
      {dialog}
      <form
        id="service-form"
        class="service-form"
        onSubmit={submit}
        aria-label={creating ? 'New service' : `Service ${id}`}
        noValidate
      >
        <Section title="Provider">
          <div class="form-row">
            {creating && (
              <IdField
                label="Id (required)"
                value={form.id}
                error={errors.id}
                taken={taken}
                hint="Templates name the service by it."
                onValue={(v) => {
                  setTaken(undefined);
                  setForm((f) => ({ ...f, id: v }));
                }}
              />
            )}
            {creating ? (
              <Select
                label="Provider"
                value={form.provider}
                options={PROVIDERS.map((p) => [p, p] as const)}
                error={errors.provider}
                onValue={(v) => setForm((f) => ({ ...f, provider: v as Provider }))}
              />
            ) : (
              <Field
                label="Provider"
                value={form.provider}
                onValue={() => undefined}
                readOnly
                error={errors.provider}
                hint="Fixed once the service exists: for another provider, create a service and move the mail to it."
              />
            )}
          </div>
          <Checkbox
            label="Default service of the organization"
            checked={form.default}
            onChecked={(v) => setForm((f) => ({ ...f, default: v }))}
          />
          {errors[form.provider] !== undefined && (
            <Notice kind="error">
              {form.provider}: {errors[form.provider]}
            </Notice>
          )}
        </Section>
        <Section title="Connection">
          {form.provider === 'outbox' ? (
            <p>The outbox stores messages on disk instead of sending them: no settings.</p>
          ) : (
            group(connectionFields)
          )}
        </Section>
        {groups.map((title) => (
          <Section key={title} title={title}>
            {group(providerFields.filter((f) => f.group === title))}
          </Section>
        ))}
        <Section title="Sending">{group(commonFields)}</Section>
        <Section title="Provider events">
          <Select
            label="Events source"
            value={form.events_source}
            error={errors.events ?? errors['events.source']}
            options={[['', 'None'], ...EVENT_SOURCES.map((s) => [s, s] as const)]}
            onValue={(v) => setForm((f) => ({ ...f, events_source: v }))}
          />
          {group(eventFields)}
        </Section>
        {saved !== undefined && <Notice kind="ok">{saved}</Notice>}
        <FieldFailure error={failure} />
        <div class="org-form-actions">
          <button class="btn btn-primary" type="submit" disabled={busy}>
            {creating ? 'Create service' : 'Save service'}
          </button>
        </div>
      </form>
      {current !== undefined && (
        <ServiceEventsUrl
          org={org}
          id={id}
          url={current.events_url}
          hasEvents={current.events !== undefined}
          onRotated={(url) => setCurrent((c) => (c === undefined ? c : { ...c, events_url: url }))}
        />
      )}
    </>
  );
}
