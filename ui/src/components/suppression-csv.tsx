/**
 * The suppression list as a CSV file (issue 29): Export is a download link (the browser fetches
 * it with the session cookie and writes it to disk; nothing is held in the page), Import sends a
 * chosen file as it is and shows what the server made of it, bad lines by number.
 */
import './suppression-csv.css';
import { useState } from 'preact/hooks';
import { importSuppressions, type SuppressionImport, suppressionsCsvUrl } from '../api/lists';
import { formatCount } from '../lib/format';
import { ErrorNotice, Notice, Section, useId } from './ui';

/** The server's own cap (src/admin/suppression-csv.ts), checked first so a huge file is not sent for a 413. */
const MAX_BYTES = 10 * 1024 * 1024;
/** Invalid lines shown on the page; the server lists up to 1,000, and counts them all. */
const SHOWN = 50;

function ImportResult(props: { result: SuppressionImport }) {
  const r = props.result;
  const parts = [
    `${formatCount(r.imported)} added`,
    `${formatCount(r.already_suppressed)} already suppressed`,
    ...(r.duplicates > 0 ? [`${formatCount(r.duplicates)} repeated in the file`] : []),
    `${formatCount(r.invalid_count)} invalid`,
  ];
  return (
    <Notice kind={r.invalid_count === 0 ? 'ok' : 'info'}>
      <p class="csv-summary">
        Read {formatCount(r.rows)} rows: {parts.join(', ')}.
      </p>
      {r.invalid.length > 0 && (
        <>
          <p class="csv-summary">Invalid rows (not imported):</p>
          <ul class="csv-invalid">
            {r.invalid.slice(0, SHOWN).map((i) => (
              <li key={i.line}>
                Line {i.line}: <span class="mono">{i.value === '' ? '(empty)' : i.value}</span> — {i.reason}
              </li>
            ))}
          </ul>
          {r.invalid_count > SHOWN && <p class="hint">…and {formatCount(r.invalid_count - SHOWN)} more.</p>}
        </>
      )}
    </Notice>
  );
}

export function SuppressionCsv(props: { org: string; onImported: () => void }) {
  const id = useId('csv');
  const [file, setFile] = useState<File | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [result, setResult] = useState<SuppressionImport | undefined>();
  const tooBig = file !== undefined && file.size > MAX_BYTES;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (file === undefined || tooBig) return;
    setBusy(true);
    setError(undefined);
    setResult(undefined);
    try {
      setResult(await importSuppressions(props.org, file));
      props.onImported();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Section title="Import and export">
      <p class="hint">
        CSV with a header row: <span class="mono">email</span> and optionally <span class="mono">reason</span> (manual,
        hard_bounce or complaint). Up to 100,000 rows and 10 MiB; an export imports as it is.
      </p>
      <div class="csv-actions">
        <a class="btn btn-plain" href={suppressionsCsvUrl(props.org)} download>
          Export CSV
        </a>
        <form class="csv-import" onSubmit={submit} aria-label="Import suppressions from CSV">
          <label for={id}>CSV file to import</label>
          <input
            id={id}
            type="file"
            accept=".csv,text/csv"
            aria-describedby={tooBig ? `${id}-error` : undefined}
            onChange={(e) => {
              setFile((e.target as HTMLInputElement).files?.[0]);
              setResult(undefined);
              setError(undefined);
            }}
          />
          <button type="submit" class="btn btn-primary" disabled={file === undefined || tooBig || busy} aria-busy={busy}>
            Import CSV
          </button>
        </form>
      </div>
      {tooBig && (
        <p id={`${id}-error`} class="field-error">
          The file is larger than 10 MiB: split it and import the parts.
        </p>
      )}
      <ErrorNotice error={error} />
      {result !== undefined && <ImportResult result={result} />}
    </Section>
  );
}
