import { useState } from 'preact/hooks';
import { cancelMessage, releaseMessage } from '../api/messages';
import { messageActions } from '../lib/timeline';
import { ActionButton, ErrorNotice, Notice } from './ui';

/**
 * Release (takes a credit, queues it now) and cancel (discarded, its credit returned) for a
 * message that has not left yet; the page reloads after either.
 */
export function MessageActions(props: { org: string; id: string; status: string; onDone: () => Promise<void> }) {
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string | undefined>();
  const can = messageActions(props.status);
  // After an action the status allows none: the notice of what was done stays.
  if (!can.release && !can.cancel && error === undefined && done === undefined) return null;
  const run = async (what: 'release' | 'cancel') => {
    if (what === 'cancel' && !window.confirm(`Cancel message ${props.id}? It will not be sent.`)) return;
    setError(undefined);
    setDone(undefined);
    try {
      const r = await (what === 'release' ? releaseMessage : cancelMessage)(props.org, props.id);
      setDone(what === 'release' ? `Released: the message is ${r.status} now.` : `Cancelled: the message is ${r.status} now.`);
      await props.onDone();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <div class="message-actions">
      {props.status === 'held_service_error' && (
        <Notice kind="info">
          Held because its service's settings or credentials are broken: it is retried when the service is changed.
        </Notice>
      )}
      {(can.release || can.cancel) && (
        <div class="page-actions">
          {can.release && (
            <ActionButton kind="primary" onClick={() => run('release')}>
              Release
            </ActionButton>
          )}
          {can.cancel && (
            <ActionButton kind="danger" onClick={() => run('cancel')}>
              Cancel message
            </ActionButton>
          )}
        </div>
      )}
      <ErrorNotice error={error} />
      {done !== undefined && <Notice kind="ok">{done}</Notice>}
    </div>
  );
}
