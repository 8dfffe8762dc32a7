import './message-detail.css';
import type { MessageRecipient } from '../api/messages';
import { recipientState } from '../lib/recipient-states';
import { AddressText } from './address-text';

/**
 * Each recipient of a message with its own delivery state in words (lib/recipient-states.ts) and
 * what the state means, and the relay's reply or the reason where there is one: a list, which
 * reads the same at 390 px as at a desk.
 */
export function RecipientList(props: { recipients: readonly MessageRecipient[] }) {
  if (props.recipients.length === 0) return <p class="hint">No recipients recorded.</p>;
  return (
    <ul class="recipient-list" aria-label="Recipients and their delivery state">
      {props.recipients.map((r) => {
        const s = recipientState(r.state);
        return (
          <li key={`${r.kind}:${r.address}`}>
            <span class="recipient-kind">{r.kind}</span>{' '}
            <span class="recipient-address">
              <AddressText value={r.address} />
            </span>{' '}
            <span class={`badge badge-${r.state.replace(/[^a-z_]/g, '')}`} title={r.state}>
              {s.label}
            </span>
            {s.means !== '' && <span class="hint recipient-means"> {s.means}</span>}
            {r.reason !== undefined && <div class="mono wrap recipient-reason">{r.reason}</div>}
          </li>
        );
      })}
    </ul>
  );
}
