import '../ops-pages.css';
import { getMessage } from '../api/messages';
import { testInboxApi, type InboxMessage } from '../api/test-inbox';
import { Envelope, HeaderTable, MessageParts } from '../components/message-parts';
import { Timeline } from '../components/timeline';
import { Badge, ErrorNotice, Loading, PageHeader, Section, Table } from '../components/ui';
import { useLoad } from '../components/use-load';
import { formatSize, formatTime } from '../lib/format';
import { href } from '../lib/route-match';
import type { PageProps } from './page-props';

/** The envelope and the facts of the capture. */
function Summary(props: { org: string; m: InboxMessage }) {
  const m = props.m;
  return (
    <Section title="Summary">
      <Envelope subject={m.subject} from={m.from} to={m.to} cc={m.cc} bcc={m.bcc} bccLabel="Bcc (envelope only)">
        <dt>Status</dt>
        <dd>
          <Badge value={m.status} /> <Badge value={m.mode} />
        </dd>
        <dt>Template</dt>
        <dd>
          <a href={href('orgs', props.org, 'templates', m.template_id)}>{m.template_id}</a>
        </dd>
        <dt>Captured</dt>
        <dd>{formatTime(m.captured_at)}</dd>
        <dt>Size</dt>
        <dd>{formatSize(m.size)}</dd>
      </Envelope>
    </Section>
  );
}

/**
 * `#/orgs/:org/test-inbox/:id`: one captured test message: its preview, header fields in order,
 * attachments, the message's own timeline (GET …/messages/{id}) and the `.eml` download.
 */
export function TestInboxMessage(props: PageProps) {
  const org = props.params.org ?? '';
  const id = props.params.id ?? '';
  const captured = useLoad(() => testInboxApi.get(org, id), [org, id]);
  const message = useLoad(() => getMessage(org, id), [org, id]);
  const m = captured.data;
  return (
    <>
      <p class="breadcrumb">
        <a href={href('orgs', org, 'test-inbox')}>Test inbox</a> / <span class="mono">{id}</span>
      </p>
      <PageHeader title={m?.subject ?? `Message ${id}`}>
        <a class="btn btn-plain" href={href('orgs', org, 'messages', id)}>
          Message page
        </a>
        {m !== undefined && (
          <a class="btn btn-primary" href={testInboxApi.rawUrl(org, id)} download={`${id}.eml`}>
            Download .eml
          </a>
        )}
      </PageHeader>
      <ErrorNotice error={captured.error} />
      {captured.loading && m === undefined && <Loading />}
      {m !== undefined && (
        <>
          <Summary org={org} m={m} />
          <Section title="Preview">
            <MessageParts
              html={m.html}
              text={m.text}
              htmlTitle="HTML part as captured (scripts and remote images disabled)"
              htmlFirst
            />
          </Section>
          <Section title="Headers">
            <HeaderTable headers={m.headers} />
          </Section>
          <Section title="Attachments">
            {m.attachments.length === 0 ? (
              <p class="hint">No attachments.</p>
            ) : (
              <Table caption="Attachments" head={['File', 'Type', 'Size']} rows={m.attachments.length}>
                {m.attachments.map((a, i) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: two attachments may share a name.
                  <tr key={i}>
                    <td class="wrap">{a.filename}</td>
                    <td>{a.content_type ?? '—'}</td>
                    <td>{formatSize(a.size)}</td>
                  </tr>
                ))}
              </Table>
            )}
          </Section>
        </>
      )}
      <Section title="Timeline">
        <ErrorNotice error={message.error} />
        {message.data === undefined ? message.loading && <Loading /> : <Timeline events={message.data.events} />}
      </Section>
    </>
  );
}
