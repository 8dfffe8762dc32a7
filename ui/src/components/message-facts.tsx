import type { MessageDetail } from '../api/messages';
import { formatTime } from '../lib/format';
import { href } from '../lib/route-match';
import { RecipientList } from './recipient-list';
import { Badge, Section } from './ui';

/** The message's status and ids, and each recipient with its own delivery state. */
export function MessageFacts(props: { org: string; message: MessageDetail }) {
  const m = props.message;
  const recipients = m.recipients ?? [];
  return (
    <>
      <Section title="Status">
        <dl class="facts facts-wide">
          <dt>Status</dt>
          <dd>
            <Badge value={m.status} />
            {m.mode === 'test' && (
              <>
                {' '}
                <Badge value="test" />
              </>
            )}
          </dd>
          <dt>Message id</dt>
          <dd class="mono">{m.message_id}</dd>
          <dt>Created</dt>
          <dd>{formatTime(m.created_at)}</dd>
          <dt>Sent</dt>
          <dd>{formatTime(m.sent_at)}</dd>
          <dt>Template</dt>
          <dd>
            <a href={href('orgs', props.org, 'templates', m.template_id)}>{m.template_id}</a>
          </dd>
          <dt>Service</dt>
          <dd>{m.service_id}</dd>
          <dt>Sent via</dt>
          <dd>{m.sent_via ?? '—'}</dd>
          <dt>Provider message id</dt>
          <dd class="mono wrap">{m.provider_message_id ?? '—'}</dd>
        </dl>
      </Section>
      <Section title="Recipients">
        <RecipientList recipients={recipients} />
      </Section>
    </>
  );
}
