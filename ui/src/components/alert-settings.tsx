import './alerts.css';
import { useEffect, useState } from 'preact/hooks';
import { type AlertSettings, type AlertSettingsBody, alertsApi } from '../api/alerts';
import { ApiFailure } from '../api/client';
import { FieldFailure } from './field-failure';
import { Checkbox, Field, Notice } from './ui';
import { useLoad } from './use-load';

interface Form {
  bounce: string;
  complaint: string;
  minSample: string;
  windowHours: string;
  breakerOpen: boolean;
  endpointDisabled: boolean;
}

const formOf = (s: AlertSettings): Form => ({
  bounce: s.bounce_rate_percent === null ? '' : String(s.bounce_rate_percent),
  complaint: s.complaint_rate_percent === null ? '' : String(s.complaint_rate_percent),
  minSample: String(s.min_sample),
  windowHours: String(s.window_hours),
  breakerOpen: s.breaker_open,
  endpointDisabled: s.endpoint_disabled,
});

/** A blank threshold is off (null); anything else goes as typed, and the server names what is wrong. */
const percent = (v: string): number | null => (v.trim() === '' ? null : Number(v));

const bodyOf = (f: Form): AlertSettingsBody => ({
  bounce_rate_percent: percent(f.bounce),
  complaint_rate_percent: percent(f.complaint),
  min_sample: Number(f.minSample),
  window_hours: Number(f.windowHours),
  breaker_open: f.breakerOpen,
  endpoint_disabled: f.endpointDisabled,
});

/**
 * The organization's alert settings (issue 29), a card of its own on the settings page with its
 * own Save: PUT /admin/v1/organizations/{org}/alerts. Field errors from the server show under
 * their inputs.
 */
export function AlertSettingsCard(props: { org: string }) {
  const loaded = useLoad(() => alertsApi.settings(props.org), [props.org]);
  const [form, setForm] = useState<Form | undefined>();
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (loaded.data !== undefined) setForm(formOf(loaded.data));
  }, [loaded.data]);
  if (form === undefined) return null;
  const set = <K extends keyof Form>(key: K, value: Form[K]) => {
    setSaved(false);
    setForm({ ...form, [key]: value });
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setFailure(undefined);
    setErrors({});
    try {
      setForm(formOf(await alertsApi.save(props.org, bodyOf(form))));
      setSaved(true);
    } catch (err) {
      if (err instanceof ApiFailure) setErrors(err.fieldIssues());
      setFailure(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card alert-settings" aria-labelledby="alert-settings-h" onSubmit={submit} noValidate>
      <h2 id="alert-settings-h">Alerts</h2>
      <p class="hint">
        Sent as webhook events (alert.*) to the endpoints subscribed to them, and shown on the overview. A blank threshold turns
        that alert off.
      </p>
      <div class="alert-fields">
        <Field
          label="Bounce rate threshold (%)"
          inputMode="decimal"
          value={form.bounce}
          onValue={(v) => set('bounce', v)}
          error={errors.bounce_rate_percent}
          hint="SES reviews accounts at 5 %"
        />
        <Field
          label="Complaint rate threshold (%)"
          inputMode="decimal"
          value={form.complaint}
          onValue={(v) => set('complaint', v)}
          error={errors.complaint_rate_percent}
          hint="SES reviews accounts at 0.1 %"
        />
        <Field
          label="Minimum messages"
          inputMode="numeric"
          value={form.minSample}
          onValue={(v) => set('minSample', v)}
          error={errors.min_sample}
          hint="No rate alert below this many sent"
        />
        <Field
          label="Window (hours)"
          inputMode="numeric"
          value={form.windowHours}
          onValue={(v) => set('windowHours', v)}
          error={errors.window_hours}
          hint="Rolling, 1 to 72"
        />
      </div>
      <Checkbox
        label="Alert when a service's circuit breaker opens"
        checked={form.breakerOpen}
        onChecked={(v) => set('breakerOpen', v)}
      />
      <Checkbox
        label="Alert when a webhook endpoint is disabled after failing"
        checked={form.endpointDisabled}
        onChecked={(v) => set('endpointDisabled', v)}
      />
      {saved && <Notice kind="ok">Alert settings saved.</Notice>}
      <FieldFailure error={failure} />
      <div class="org-form-actions">
        <button class="btn btn-primary" type="submit" disabled={busy}>
          Save alert settings
        </button>
      </div>
    </form>
  );
}
