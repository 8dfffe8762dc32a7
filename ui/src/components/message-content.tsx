import type { MessageContent as Content } from '../api/messages';
import { Envelope, MessageParts } from './message-parts';
import { Section } from './ui';

/**
 * The email as it was rendered for sending. The HTML goes into an iframe with an empty sandbox
 * (no scripts, no same origin, no forms, no navigation of the top page), so whatever the
 * template put in it can never run in the operator's session.
 */
export function MessageContent(props: { content: Content | null | undefined }) {
  const c = props.content;
  if (c === undefined) return null;
  if (c === null) {
    return (
      <Section title="Content">
        <p class="hint">The rendered content is no longer stored (retention removed it).</p>
      </Section>
    );
  }
  return (
    <Section title="Content, as rendered for sending">
      <Envelope subject={c.subject} from={c.from} to={c.to} cc={c.cc} bcc={c.bcc} replyTo={c.reply_to} always />
      <MessageParts html={c.html} text={c.text} htmlTitle="HTML part as sent (scripts disabled)" />
    </Section>
  );
}
