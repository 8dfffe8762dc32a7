/**
 * The pieces of an email's view shared by the message page (message-content.tsx) and the captured
 * test message (pages/test-inbox-message.tsx): the addresses block, the HTML and text parts, and
 * the header fields. Everything here is the message's own text, shown as text (Preact escapes it).
 */
import type { ComponentChildren } from 'preact';
import { formatList } from '../lib/format';
import { SandboxedHtml } from './sandboxed-html';
import { Table } from './table';

/**
 * Subject, From and the address lists as a `dl`; `children` adds the caller's own facts after
 * them. Reply-To, Cc and Bcc show only when given and not empty, unless `always` lists them.
 */
export function Envelope(props: {
  subject: string | null;
  from: string;
  to: readonly string[];
  cc?: readonly string[] | undefined;
  bcc?: readonly string[] | undefined;
  replyTo?: readonly string[] | undefined;
  /** Show the empty lists as a dash (the message page names every field it stored). */
  always?: boolean;
  /** The Bcc label: on a captured message the Bcc is in the envelope only, never a header. */
  bccLabel?: string;
  /** The list's class: `facts facts-wide` on the message pages. */
  class?: string;
  subjectTestId?: string;
  children?: ComponentChildren;
}) {
  const row = (label: string, list: readonly string[] | undefined) =>
    (props.always === true || (list !== undefined && list.length > 0)) && (
      <>
        <dt>{label}</dt>
        <dd class="wrap">{formatList(list)}</dd>
      </>
    );
  return (
    <dl class={props.class ?? 'facts facts-wide'}>
      <dt>Subject</dt>
      <dd data-testid={props.subjectTestId}>{props.subject ?? '—'}</dd>
      <dt>From</dt>
      <dd class="wrap">{props.from}</dd>
      {row('Reply-To', props.replyTo)}
      <dt>To</dt>
      <dd class="wrap">{formatList(props.to)}</dd>
      {row('Cc', props.cc)}
      {row(props.bccLabel ?? 'Bcc', props.bcc)}
      {props.children}
    </dl>
  );
}

/** The text part in a focusable, named `<pre>` (max-height 360px, so a keyboard must be able to scroll it). */
export function TextPart(props: { text: string | null; class?: string; label?: string }) {
  if (props.text === null || props.text === '') return <p class="hint">No text part.</p>;
  return (
    // A region, because a <pre> (no role) cannot carry a name (aria-label alone is not allowed on it).
    // biome-ignore lint/a11y/useSemanticElements: role region names the scrolling <pre> (a <section> would wrap it).
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region is keyboard-reachable (axe).
    <pre class={props.class ?? 'message-text'} tabIndex={0} role="region" aria-label={props.label ?? 'Text part'}>
      {props.text}
    </pre>
  );
}

/** The HTML part sandboxed (sandboxed-html.tsx), or a hint that there is none. */
export function HtmlPart(props: { html: string | null; title: string }) {
  if (props.html === null || props.html === '') return <p class="hint">No HTML part.</p>;
  return <SandboxedHtml html={props.html} title={props.title} />;
}

/** Both parts, each under its heading, in the order the page reads best (`htmlFirst` for a preview). */
export function MessageParts(props: { html: string | null; text: string | null; htmlTitle: string; htmlFirst?: boolean }) {
  const html = (
    <>
      <h3>HTML</h3>
      <HtmlPart html={props.html} title={props.htmlTitle} />
    </>
  );
  return (
    <>
      {props.htmlFirst === true && html}
      <h3>Text</h3>
      <TextPart text={props.text} />
      {props.htmlFirst !== true && html}
    </>
  );
}

/** Header fields in order, as the server read them (unfolded, encoded words decoded); a field may repeat. */
export function HeaderTable(props: { headers: ReadonlyArray<{ name: string; value: string }> }) {
  return (
    <Table caption="Header fields, in order" head={['Name', 'Value']} rows={props.headers.length}>
      {props.headers.map((h, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a header may repeat (Received); the list is replaced whole.
        <tr key={i}>
          <th scope="row" class="nowrap header-name">
            {h.name}
          </th>
          <td class="mono wrap header-value">{h.value}</td>
        </tr>
      ))}
    </Table>
  );
}
