import type { MessageContent as Content } from '../api/messages';
import { SandboxedHtml } from './sandboxed-html';
import { Section } from './ui';

const list = (a: readonly string[] | undefined) => (a === undefined || a.length === 0 ? '—' : a.join(', '));

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
      <dl class="facts facts-wide">
        <dt>Subject</dt>
        <dd>{c.subject}</dd>
        <dt>From</dt>
        <dd>{c.from}</dd>
        <dt>Reply-To</dt>
        <dd>{list(c.reply_to)}</dd>
        <dt>To</dt>
        <dd>{list(c.to)}</dd>
        <dt>Cc</dt>
        <dd>{list(c.cc)}</dd>
        <dt>Bcc</dt>
        <dd>{list(c.bcc)}</dd>
      </dl>
      <h3>Text</h3>
      {c.text === null ? (
        <p class="hint">No text part.</p>
      ) : (
        // Focusable so a keyboard can scroll it (max-height 360px); a region, because a <pre> (no role)
        // cannot carry a name (aria-label alone is not allowed on it).
        // biome-ignore lint/a11y/useSemanticElements: role region names the scrolling <pre> (a <section> would wrap it).
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region is keyboard-reachable (axe).
        <pre class="message-text" tabIndex={0} role="region" aria-label="Text part">
          {c.text}
        </pre>
      )}
      <h3>HTML</h3>
      {c.html === null ? (
        <p class="hint">No HTML part.</p>
      ) : (
        <SandboxedHtml html={c.html} title="HTML part as sent (scripts disabled)" />
      )}
    </Section>
  );
}
