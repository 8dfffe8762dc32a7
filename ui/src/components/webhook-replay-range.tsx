import { useState } from 'preact/hooks';
import { ApiFailure } from '../api/client';
import { replayRange } from '../api/webhooks';
import { Checkbox, ErrorNotice, Field, Notice } from './ui';

/** A datetime-local value (the browser's local time) as an ISO instant, or undefined. */
function instant(local: string): string | undefined {
  const ms = Date.parse(local);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** Sends again every event of a time range (at most 31 days) to the endpoint, or only the failed ones. */
export function WebhookReplayRange(props: { org: string; id: string; onQueued: () => void }) {
  const [since, setSince] = useState('');
  const [until, setUntil] = useState('');
  const [onlyFailed, setOnlyFailed] = useState(true);
  const [error, setError] = useState<unknown>();
  const [note, setNote] = useState<string | undefined>();
  const issues = error instanceof ApiFailure ? error.fieldIssues() : {};
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setNote(undefined);
    const s = instant(since);
    const u = instant(until);
    if (s === undefined || u === undefined) {
      setError(new Error('Give both ends of the range.'));
      return;
    }
    try {
      const r = await replayRange(props.org, props.id, { since: s, until: u, only_failed: onlyFailed });
      setNote(`${r.queued} deliver${r.queued === 1 ? 'y' : 'ies'} queued.${r.message !== undefined ? ` ${r.message}` : ''}`);
      props.onQueued();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form onSubmit={submit} aria-label="Replay a time range">
      <div class="form-row">
        <Field
          label="Since (your local time)"
          type="datetime-local"
          value={since}
          onValue={setSince}
          required
          error={issues.since}
        />
        <Field
          label="Until (your local time)"
          type="datetime-local"
          value={until}
          onValue={setUntil}
          required
          error={issues.until}
        />
      </div>
      <Checkbox label="Only deliveries that failed" checked={onlyFailed} onChecked={setOnlyFailed} />
      {Object.keys(issues).length === 0 && <ErrorNotice error={error} />}
      {note !== undefined && <Notice kind="ok">{note}</Notice>}
      <button type="submit" class="btn btn-plain">
        Replay range
      </button>
    </form>
  );
}
