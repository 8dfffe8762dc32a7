import './message-detail.css';
import type { ComponentChildren } from 'preact';
import { useRef } from 'preact/hooks';
import { type MessageContent as Content, getMessageSource, messageRawUrl, type MessageSource } from '../api/messages';
import { formatSize } from '../lib/format';
import { Envelope, HeaderTable, HtmlPart, TextPart } from './message-parts';
import { type TabDef, Tabs, useHashTab } from './tabs';
import { ErrorNotice, Loading, Notice, Section } from './ui';
import { useLoad } from './use-load';

/** The content's tabs, in order; the first is the default (no `tab` in the hash). */
export const CONTENT_TABS: readonly TabDef[] = [
  { id: 'html', label: 'HTML' },
  { id: 'text', label: 'Text' },
  { id: 'headers', label: 'Headers' },
  { id: 'raw', label: 'Raw source' },
];

/** Raw source: the `.eml` text in a focusable `<pre>` (only the first 256 KiB: the server cuts it) and its download. */
function RawSource(props: { source: MessageSource; href: string; id: string }) {
  const s = props.source;
  return (
    <>
      <div class="page-actions raw-actions">
        <a class="btn btn-plain" href={props.href} download={`${props.id}.eml`}>
          Download .eml
        </a>
        <span class="hint">
          {formatSize(s.size)}
          {s.origin === 'captured'
            ? ', as captured in the test inbox'
            : s.origin === 'submitted'
              ? ', as submitted over SMTP'
              : ''}
        </span>
      </div>
      {s.truncated && (
        <Notice kind="info">
          Cut: the first 256 KiB of {formatSize(s.size)} are shown. Download the .eml for the whole message.
        </Notice>
      )}
      {/* Untrusted text: a text node (Preact escapes it), never markup. */}
      <TextPart text={s.text} label="Raw source" class="message-text message-raw" />
    </>
  );
}

/**
 * The email as rendered for sending, in four tabs (issue 29): the HTML part in an iframe with an
 * empty sandbox (no scripts, no same origin, no forms, no navigation of the top page, the UI's CSP
 * inherited: nothing in it can act in the operator's session), the text part, and the message as
 * composed for an SMTP relay (…/source): its header fields decoded, and its raw source with the
 * `.eml` download. The source is fetched when one of its tabs is first opened.
 */
export function MessageContent(props: { org: string; id: string; content: Content | null | undefined; query: URLSearchParams }) {
  const { org, id } = props;
  const [tab, select] = useHashTab(props.query, CONTENT_TABS);
  // Once opened, the source stays loaded: going back to HTML and on to Raw does not fetch it again.
  const opened = useRef(false);
  if (tab === 'headers' || tab === 'raw') opened.current = true;
  const needsSource = opened.current;
  const source = useLoad(() => (needsSource ? getMessageSource(org, id) : Promise.resolve(undefined)), [org, id, needsSource]);
  const c = props.content;
  if (c === undefined) return null;
  const fromSource = (show: (s: MessageSource) => ComponentChildren) => (
    <>
      <ErrorNotice error={source.error} />
      {source.data === undefined ? source.loading && <Loading /> : show(source.data)}
    </>
  );
  const gone = <p class="hint">The rendered content is no longer stored (retention removed it).</p>;
  const panel = (t: string) => {
    if (t === 'html') return c === null ? gone : <HtmlPart html={c.html} title="HTML part as sent (scripts disabled)" />;
    if (t === 'text') return c === null ? gone : <TextPart text={c.text} />;
    if (t === 'headers') return fromSource((s) => <HeaderTable headers={s.headers} />);
    return fromSource((s) => <RawSource source={s} href={messageRawUrl(org, id)} id={id} />);
  };
  return (
    <Section title="Content, as rendered for sending">
      {c !== null && <Envelope subject={c.subject} from={c.from} to={c.to} cc={c.cc} bcc={c.bcc} replyTo={c.reply_to} always />}
      <Tabs label="Message content" tabs={CONTENT_TABS} selected={tab} onSelect={select} panel={panel} />
    </Section>
  );
}
