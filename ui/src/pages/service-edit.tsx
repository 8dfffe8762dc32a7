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
import { Badge, Checkbox, ErrorNotice, Loading, Notice, PageHeader, Section, Select } from '../components/ui';
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
 */
export function ServiceEdit(props: PageProps) {
  const org = props.params.org as string;
  const creating = props.params.id === 'new';
  const id = props.params.id as string;
  const loaded = useLoad(() => (creating ? Promise.resolve(undefined) : servicesApi.get(org, id)), [org, id]);
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
  const submit = async (e: Event) => {
    e.preventDefault();
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
  const eventFields = fields.filter((f) => f.path.startsWith('events.'));
  const commonFields = fields.filter((f) => !providerFields.includes(f) && !eventFields.includes(f));
  const field = (spec: (typeof fields)[number]) => (
    <ServiceField
      key={spec.path}
      spec={spec}
      values={form.values}
      stored={form.stored.has(spec.path)}
      error={errors[spec.path]}
      onValue={setValue}
    />
  );
  // Inputs side by side, checkboxes each on their own line under them.
  const group = (specs: typeof fields) => (
    <>
      <div class="form-row">{specs.filter((f) => f.kind !== 'checkbox').map(field)}</div>
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
          onDeleted={() => navigate(href('orgs', org, 'services'))}
        />
      )}
      <ServiceTestPanel
        org={org}
        id={creating ? undefined : id}
        unsaved={() => {
          const body = serviceBody(form);
          const saved = current === undefined ? undefined : serviceBody(formFromService(current));
          return saved !== undefined && JSON.stringify(saved) === JSON.stringify(body) ? undefined : body;
        }}
      />
      <form onSubmit={submit} aria-label={creating ? 'New service' : `Service ${id}`} noValidate>
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
            <Select
              label="Provider"
              value={form.provider}
              options={PROVIDERS.map((p) => [p, p] as const)}
              error={errors.provider}
              onValue={(v) => setForm((f) => ({ ...f, provider: v as Provider }))}
            />
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
          {form.provider === 'outbox' ? (
            <p>The outbox stores messages on disk instead of sending them: no settings.</p>
          ) : (
            group(providerFields)
          )}
        </Section>
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
