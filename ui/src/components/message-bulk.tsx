/**
 * Bulk release and cancel of held messages (issue 29), kept out of the Messages page: the page
 * asks useMessageSelection for a selection (there is one only while the list is filtered to
 * held statuses), gives it to the table for its checkbox column and to BulkBar for the actions.
 * Each id is answered on its own by the server (…/messages/release|cancel): the bar shows how
 * many succeeded and why the others did not, and links to the organization's credits when a
 * release failed for want of them.
 */
import './message-bulk.css';
import { useEffect, useState } from 'preact/hooks';
import { type BulkAction, type BulkResult, bulkMessages, type MessageSummary } from '../api/messages';
import { organizationsApi } from '../api/organizations';
import { formatCount } from '../lib/format';
import { href } from '../lib/route-match';
import { Modal } from './modal';
import { ErrorNotice, Notice } from './ui';
import { useLoad } from './use-load';

/** The statuses a bulk action applies to: release needs `held`; cancel takes either. */
const HELD = ['held', 'held_service_error'];

export interface MessageSelection {
  /** Ids on this page, in its order. */
  ids: string[];
  selected: ReadonlySet<string>;
  toggle: (id: string, on: boolean) => void;
  setAll: (on: boolean) => void;
  /** Whether Release applies (the filter includes `held`). */
  canRelease: boolean;
}

/**
 * A selection over the page's rows while the status filter names held statuses only; undefined
 * otherwise (no checkbox column). It starts empty on every new page or filter (`resetKey`); a reload of
 * the same page keeps the selected rows still listed.
 */
export function useMessageSelection(
  statuses: readonly string[],
  items: readonly MessageSummary[] | undefined,
  resetKey: string,
): MessageSelection | undefined {
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  // biome-ignore lint/correctness/useExhaustiveDependencies: resetKey is the cue (a new page or filter).
  useEffect(() => setSelected(new Set()), [resetKey]);
  // A reload (by hand or auto-refresh's every 10 s) keeps what is still listed selected.
  useEffect(() => {
    const listed = new Set((items ?? []).map((m) => m.message_id));
    setSelected((s) => ([...s].every((id) => listed.has(id)) ? s : new Set([...s].filter((id) => listed.has(id)))));
  }, [items]);
  if (statuses.length === 0 || !statuses.every((s) => HELD.includes(s)) || items === undefined) return undefined;
  const ids = items.map((m) => m.message_id);
  return {
    ids,
    selected,
    canRelease: statuses.includes('held'),
    toggle: (id, on) =>
      setSelected((s) => {
        const next = new Set(s);
        if (on) next.add(id);
        else next.delete(id);
        return next;
      }),
    setAll: (on) => setSelected(new Set(on ? ids : [])),
  };
}

/** The checkbox of one row (the table's first cell while a selection exists). */
export function SelectCell(props: { selection: MessageSelection; id: string; label: string }) {
  return (
    <td class="select-cell">
      <input
        type="checkbox"
        aria-label={`Select ${props.label}`}
        checked={props.selection.selected.has(props.id)}
        onChange={(e) => props.selection.toggle(props.id, (e.target as HTMLInputElement).checked)}
      />
    </td>
  );
}

const VERB: Record<BulkAction, { button: string; done: string; title: string }> = {
  release: { button: 'Release selected', done: 'released', title: 'Release' },
  cancel: { button: 'Cancel selected', done: 'cancelled', title: 'Cancel' },
};

const plural = (n: number, word: string) => `${formatCount(n)} ${word}${n === 1 ? '' : 's'}`;

/** Why ids failed, grouped by the server's code, in words. */
function failureLines(result: BulkResult): string[] {
  const by = new Map<string, number>();
  for (const r of result.results) if (!r.ok) by.set(r.error ?? 'error', (by.get(r.error ?? 'error') ?? 0) + 1);
  const words: Record<string, string> = {
    insufficient_credits: 'not enough credits',
    conflict: 'no longer held (sent, cancelled or released meanwhile)',
    message_not_found: 'not found',
  };
  return [...by].map(([code, n]) => `${plural(n, 'message')}: ${words[code] ?? code}`);
}

export function BulkBar(props: { org: string; selection: MessageSelection | undefined; onDone: () => void }) {
  const { org, selection } = props;
  const [asking, setAsking] = useState<BulkAction | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [result, setResult] = useState<{ action: BulkAction; body: BulkResult } | undefined>();
  const position = useLoad(
    () => (selection?.canRelease === true ? organizationsApi.get(org) : Promise.resolve(undefined)),
    [org, selection?.canRelease === true, result],
  );
  if (selection === undefined) return null;
  const count = selection.selected.size;
  const all = selection.ids.length > 0 && selection.ids.every((id) => selection.selected.has(id));
  const org_ = position.data;
  // Held messages wait for credits: short when the balance cannot pay for those still held.
  const short = org_ !== undefined && org_.credits !== 'unlimited' && org_.held > 0 && org_.credits < org_.held;
  const creditsFailed = result?.body.results.some((r) => r.error === 'insufficient_credits') === true;

  const run = async (action: BulkAction) => {
    setBusy(true);
    setError(undefined);
    try {
      const body = await bulkMessages(org, action, [...selection.selected]);
      setResult({ action, body });
      setAsking(undefined);
      // Acted on: the selection is spent (a failed release stays listed, unselected, to try again).
      selection.setAll(false);
      props.onDone();
    } catch (err) {
      setError(err);
      setAsking(undefined);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="bulk-bar" aria-label="Bulk actions">
      <div class="bulk-controls">
        <label class="bulk-all">
          <input
            type="checkbox"
            checked={all}
            disabled={selection.ids.length === 0}
            onChange={(e) => selection.setAll((e.target as HTMLInputElement).checked)}
          />
          Select all on this page
        </label>
        <span class="bulk-count" aria-live="polite">
          {count === 0 ? 'None selected' : `${plural(count, 'message')} selected`}
        </span>
        {selection.canRelease && (
          <button type="button" class="btn btn-primary" disabled={count === 0 || busy} onClick={() => setAsking('release')}>
            {VERB.release.button}
          </button>
        )}
        <button type="button" class="btn btn-danger" disabled={count === 0 || busy} onClick={() => setAsking('cancel')}>
          {VERB.cancel.button}
        </button>
      </div>
      {(short || creditsFailed) && org_ !== undefined && org_.credits !== 'unlimited' && (
        <p class="bulk-credits">
          {formatCount(org_.held)} held, {formatCount(org_.credits)} credits left: each release takes one.{' '}
          <a href={href('orgs', org, 'settings')}>Add credits in Settings</a> (a top-up releases held messages oldest first).
        </p>
      )}
      <ErrorNotice error={error} />
      {result !== undefined && (
        <Notice kind={result.body.failed === 0 ? 'ok' : 'info'}>
          {plural(result.body.succeeded, 'message')} {VERB[result.action].done}
          {result.body.failed > 0 ? `; ${formatCount(result.body.failed)} not:` : '.'}
          {result.body.failed > 0 && (
            <ul>
              {failureLines(result.body).map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          )}
        </Notice>
      )}
      <Modal
        open={asking !== undefined}
        title={asking === undefined ? '' : `${VERB[asking].title} ${plural(count, 'message')}?`}
        onClose={() => setAsking(undefined)}
        actions={
          asking !== undefined && (
            <>
              <button
                type="button"
                class={`btn ${asking === 'cancel' ? 'btn-danger' : 'btn-primary'}`}
                disabled={busy}
                aria-busy={busy ? 'true' : undefined}
                onClick={() => void run(asking)}
              >
                {asking === 'release' ? 'Release' : 'Cancel messages'}
              </button>
              <button type="button" class="btn btn-plain" onClick={() => setAsking(undefined)}>
                Keep them held
              </button>
            </>
          )
        }
      >
        {asking === 'release' ? (
          <p>Each message released is queued for sending now and takes one credit. Any that cannot be are listed after.</p>
        ) : (
          <p>Cancelled messages are discarded and never sent. This cannot be undone.</p>
        )}
      </Modal>
    </section>
  );
}
