import { useEffect, useState } from 'preact/hooks';
import { servicesApi, type WaitingMessages } from '../api/services';
import { Modal } from './modal';
import { ErrorNotice, Loading, Select } from './ui';

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * Deleting a service (issue 29): the server refuses while messages wait on it, so the dialog
 * says first what blocks the delete ("2 messages are waiting for this service": the queued and
 * held ones) and offers to move them to another service (a picker), then deletes; it also says when
 * the service is the organization's default. Messages a worker is sending now cannot be moved: it
 * says to wait for them.
 */
export function ServiceDeleteDialog(props: { org: string; id: string; onClose: () => void; onDeleted: () => void }) {
  const [waiting, setWaiting] = useState<WaitingMessages | undefined>();
  const [others, setOthers] = useState<string[]>([]);
  const [isDefault, setIsDefault] = useState(false);
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
      setIsDefault(list.items.some((s) => s.id === props.id && s.default));
      setTarget((t) => (t !== '' && ids.includes(t) ? t : (ids[0] ?? '')));
    } catch (err) {
      setFailure(err);
    }
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: mounted once per opening, it loads once (a retry calls load itself)
  useEffect(() => {
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
  const parts =
    waiting === undefined
      ? []
      : [
          waiting.queued > 0 && plural(waiting.queued, 'queued', 'queued'),
          waiting.held > 0 && plural(waiting.held, 'held', 'held'),
        ].filter((p) => p !== false);
  const actions = (
    <>
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
      <button type="button" class="btn btn-plain" onClick={props.onClose}>
        Cancel
      </button>
    </>
  );
  return (
    <Modal open title={`Delete service ${props.id}?`} onClose={props.onClose} actions={actions}>
      {waiting === undefined && failure === undefined && <Loading />}
      {waiting !== undefined && (
        <>
          {movable > 0 && (
            <p>
              <strong>
                {plural(movable, 'message is', 'messages are')} waiting for this service
                {parts.length > 1 || waiting.held > 0 ? ` (${parts.join(', ')})` : ''}.
              </strong>{' '}
              Move them to another service before deleting it; those held on its error are queued again there.
            </p>
          )}
          {waiting.sending > 0 && (
            <p>
              <strong>{plural(waiting.sending, 'message is', 'messages are')} being sent through it now</strong>:{' '}
              {`delete it when ${waiting.sending === 1 ? 'it has' : 'they have'} left.`}
            </p>
          )}
          {movable === 0 && waiting.sending === 0 && <p>No message is waiting on it.</p>}
          {isDefault && (
            <p>
              <strong>This is the organization's default service:</strong> sends whose template names no service have none until
              another is made the default.
            </p>
          )}
          <p>Templates that name it keep the name; a service created later with this id takes them again.</p>
          {movable > 0 &&
            (others.length > 0 ? (
              <Select label="Move them to" value={target} options={others.map((o) => [o, o] as const)} onValue={setTarget} />
            ) : (
              <p>There is no other service to move them to: create one first.</p>
            ))}
        </>
      )}
      <ErrorNotice error={failure} />
    </Modal>
  );
}
