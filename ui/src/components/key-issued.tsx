import type { IssuedKey } from '../api/keys';
import { formatTime } from '../lib/format';
import { CopyButton, Notice } from './ui';

/** A key just created or rotated: its value, once, with a copy button and the warning. */
export function IssuedKeyNotice(props: { issued: IssuedKey; onDismiss: () => void }) {
  const k = props.issued;
  return (
    <Notice kind="ok">
      <p>
        <strong>
          New {k.mode === 'test' ? `test ${k.type}` : k.type} key {k.id}
        </strong>
        {k.previous_key !== undefined && (
          <>
            {' '}
            (replaces {k.previous_key.id}, which stops working {formatTime(k.previous_key.expires_at)})
          </>
        )}
      </p>
      <p class="key-value">
        <code>{k.key}</code> <CopyButton value={k.key} label={`Copy the new key ${k.id}`} />
      </p>
      {k.type === 'private' && (
        <p>
          <strong>Copy it now: it will not be shown again.</strong> Only a fragment of it is kept for display.
        </p>
      )}
      <button type="button" class="btn btn-plain btn-small" onClick={props.onDismiss}>
        I have copied it
      </button>
    </Notice>
  );
}
