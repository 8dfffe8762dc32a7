import { CopyButton, Notice } from './ui';

/** A signing secret, shown once after create or rotate: it is never readable again. */
export function WebhookSecret(props: { secret: string; note?: string }) {
  return (
    <Notice kind="ok">
      <p>
        <strong>Signing secret</strong> — copy it now; it will not be shown again.
        {props.note !== undefined ? ` ${props.note}` : ''}
      </p>
      <p class="secret-line">
        <code class="secret">{props.secret}</code> <CopyButton value={props.secret} label="Copy the signing secret" />
      </p>
    </Notice>
  );
}
