import '../ops-pages.css';
import { getMessage } from '../api/messages';
import { MessageActions } from '../components/message-actions';
import { MessageContent } from '../components/message-content';
import { MessageDeliveries } from '../components/message-deliveries';
import { MessageFacts } from '../components/message-facts';
import { Timeline } from '../components/timeline';
import { ErrorNotice, Loading, Notice, PageHeader, Section } from '../components/ui';
import { useLoad } from '../components/use-load';
import { href, hrefWithQuery } from '../lib/route-match';
import { isSettling } from '../lib/timeline';
import type { PageProps } from './page-props';

/**
 * `#/orgs/:org/messages/:id[?tab=text|headers|raw]`: status, each recipient's state, the timeline,
 * the content as sent in tabs (HTML, text, headers, raw source and its .eml), the webhook
 * deliveries of its events, and release/cancel.
 */
export function MessageDetail(props: PageProps) {
  const org = props.params.org ?? '';
  const id = props.params.id ?? '';
  const message = useLoad(() => getMessage(org, id), [org, id]);
  const m = message.data;
  return (
    <>
      <p class="breadcrumb">
        <a href={m?.mode === 'test' ? hrefWithQuery(['orgs', org, 'messages'], { mode: 'test' }) : href('orgs', org, 'messages')}>
          {m?.mode === 'test' ? 'Test messages' : 'Messages'}
        </a>{' '}
        / <span class="mono">{id}</span>
      </p>
      <PageHeader title={`Message ${id}`}>
        <button
          type="button"
          class="btn btn-plain"
          onClick={() => void message.reload()}
          aria-busy={message.loading ? 'true' : undefined}
        >
          Reload
        </button>
      </PageHeader>
      <ErrorNotice error={message.error} />
      {message.loading && m === undefined && <Loading />}
      {m !== undefined && (
        <>
          {m.mode === 'test' && (
            <Notice kind="info">
              A test message (sent with a test key): never delivered, never charged. Its captured copy is in the{' '}
              <a href={href('orgs', org, 'test-inbox', m.message_id)}>Test inbox</a>.
            </Notice>
          )}
          {isSettling(m.status) && <Notice kind="info">Delivery is under way: Reload to see the events that follow.</Notice>}
          <MessageActions org={org} id={m.message_id} status={m.status} onDone={message.reload} />
          <MessageFacts org={org} message={m} />
          <Section title="Timeline">
            <Timeline events={m.events} />
          </Section>
          <MessageContent org={org} id={m.message_id} content={m.content} query={props.query} />
          <MessageDeliveries org={org} id={m.message_id} refresh={m} />
        </>
      )}
    </>
  );
}
