import './service-delete.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { servicesApi, type WaitingMessages } from '../api/services';
import { ErrorNotice, Loading, Select } from './ui';

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * Deleting a service (issue 29): the server refuses while messages wait on it, so the dialog
 * names the queued and held ones first and offers to move them to another service (a picker),
 * then deletes. Messages a worker is sending now cannot be moved: it says to wait for them.
 */
export function ServiceDeleteDialog(props: { org: string; id: string; onClose: () => void; onDeleted: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [waiting, setWaiting] = useState<WaitingMessages | undefined>();
  const [others, setOthers] = useState<string[]>([]);
  const [target, setTarget] = useState('');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<unknown>();
  const load = async () => {
    setFailure(undefined);
    try {
      const [w, list] = await Promise.all([servicesApi.waiting(props.org, props.id), servicesApi.list(props.org)]);
      const ids = list.items.map((s) => s.id).filter((s) => s !== props.id);
      setWaiting(w);
      setOthers(ids);
      setTarget((t) => (t !== '' && ids.includes(t) ? t : (ids[0] ?? '')));
    } catch (err) {
      setFailure(err);
    }
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: mounted once per opening, it loads once (a retry calls load itself)
  useEffect(() => {
    ref.current?.showModal();
    void load();
  }, []);

  const movable = waiting === undefined ? 0 : waiting.queued + waiting.held;
  const run = async (move: boolean) => {
    setBusy(true);
    setFailure(undefined);
    try {
      if (move) await servicesApi.moveMessages(props.org, props.id, target);
      await servicesApi.remove(props.org, props.id);
      props.onDeleted();
    } catch (err) {
      setFailure(err);
      await load();
    } finally {
      setBusy(false);
    }
  };
  const titleId = `delete-${props.id}-title`;
  return (
    <dialog ref={ref} class="service-delete" aria-labelledby={titleId} onClose={props.onClose}>
      <h2 id={titleId}>Delete service {props.id}?</h2>
      {waiting === undefined && failure === undefined && <Loading />}
      {waiting !== undefined && (
        <>
          <p>Templates that name it keep the name; a service created later with this id takes them again.</p>
          {movable === 0 && waiting.sending === 0 && <p>No message is waiting on it.</p>}
          {movable > 0 && (
            <p>
              <strong>
                {plural(waiting.queued, 'queued message', 'queued messages')} and{' '}
                {plural(waiting.held, 'held message', 'held messages')}
              </strong>{' '}
              wait on this service. Move them to another service before deleting it; those held on its error are queued again
              there.
            </p>
          )}
          {waiting.sending > 0 && (
            <p>
              {plural(waiting.sending, 'message is', 'messages are')} being sent through it now: delete it when{' '}
              {waiting.sending === 1 ? 'it has' : 'they have'} left.
            </p>
          )}
          {movable > 0 &&
            (others.length > 0 ? (
              <Select label="Move them to" value={target} options={others.map((o) => [o, o] as const)} onValue={setTarget} />
            ) : (
              <p>There is no other service to move them to: create one first.</p>
            ))}
        </>
      )}
      <ErrorNotice error={failure} />
      <div class="service-delete-actions">
        <button type="button" class="btn btn-plain" onClick={() => ref.current?.close()}>
          Cancel
        </button>
        {waiting !== undefined && movable > 0 && others.length > 0 && (
          <button type="button" class="btn btn-danger" disabled={busy || waiting.sending > 0} onClick={() => void run(true)}>
            Move {plural(movable, 'message', 'messages')} to {target} and delete
          </button>
        )}
        {waiting !== undefined && movable === 0 && (
          <button type="button" class="btn btn-danger" disabled={busy || waiting.sending > 0} onClick={() => void run(false)}>
            Delete service
          </button>
        )}
      </div>
    </dialog>
  );
}
