import { useState } from 'preact/hooks';
import { ApiFailure } from '../api/client';
import { isWebhookEventType, WEBHOOK_EVENT_TYPES, type WebhookEventType, type WebhookSettings } from '../api/webhooks';
import { ErrorNotice, Field, useId } from './ui';
import { headersBody, storedRows, WebhookHeaders } from './webhook-headers';

/**
 * An endpoint's settings: its URL, which events it receives (all, or a checklist of the event
 * types), a description and custom request headers (values write-only). Used to add an endpoint
 * and to edit one.
 */
export function WebhookForm(props: {
  initial?: { url: string; events: string[]; description: string | null; headers?: ReadonlyArray<{ name: string }> };
  submitLabel: string;
  onSubmit: (s: WebhookSettings) => Promise<void>;
}) {
  const init = props.initial;
  const [url, setUrl] = useState(init?.url ?? '');
  const [all, setAll] = useState(init === undefined || init.events.includes('*'));
  const [events, setEvents] = useState<WebhookEventType[]>(
    init === undefined || init.events.includes('*') ? [] : init.events.filter(isWebhookEventType),
  );
  const [description, setDescription] = useState(init?.description ?? '');
  const [headers, setHeaders] = useState(() => storedRows(init?.headers));
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const id = useId('wh');
  const issues = error instanceof ApiFailure ? error.fieldIssues() : {};
  const eventsProblem = !all && events.length === 0 ? 'Choose at least one event type, or all of them.' : issues.events;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!all && events.length === 0) return;
    setBusy(true);
    setError(undefined);
    try {
      await props.onSubmit({
        url: url.trim(),
        events: all ? ['*'] : events,
        description: description.trim() === '' ? null : description.trim(),
        headers: headersBody(headers),
      });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const toggle = (t: WebhookEventType, on: boolean) =>
    setEvents(on ? [...events.filter((x) => x !== t), t] : events.filter((x) => x !== t));
  return (
    <form onSubmit={submit} class="webhook-form" aria-label={props.submitLabel}>
      <Field
        label="URL"
        type="url"
        value={url}
        onValue={setUrl}
        required
        placeholder="https://example.com/hooks/mailroom"
        error={issues.url}
        hint="https to a public address in production"
      />
      <fieldset class="event-choices" aria-describedby={eventsProblem !== undefined ? `${id}-err` : undefined}>
        <legend>Events</legend>
        <label class="event-choice event-all">
          <input type="checkbox" checked={all} onChange={(e) => setAll((e.target as HTMLInputElement).checked)} />
          All event types
        </label>
        {!all &&
          WEBHOOK_EVENT_TYPES.map((t) => (
            <label key={t} class="event-choice">
              <input
                type="checkbox"
                name="events"
                value={t}
                checked={events.includes(t)}
                onChange={(e) => toggle(t, (e.target as HTMLInputElement).checked)}
              />
              <code>{t}</code>
            </label>
          ))}
        {eventsProblem !== undefined && (
          <small id={`${id}-err`} class="field-error" role="alert">
            {eventsProblem}
          </small>
        )}
      </fieldset>
      <Field label="Description" value={description} onValue={setDescription} error={issues.description} />
      <WebhookHeaders rows={headers} onRows={setHeaders} issues={issues} />
      {Object.keys(issues).length === 0 && <ErrorNotice error={error} />}
      <button type="submit" class="btn btn-primary" disabled={busy}>
        {props.submitLabel}
      </button>
    </form>
  );
}
