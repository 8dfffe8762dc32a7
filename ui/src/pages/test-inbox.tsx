import '../ops-pages.css';
import { useState } from 'preact/hooks';
import { templatesApi } from '../api/templates';
import { testInboxApi } from '../api/test-inbox';
import { InboxFilterForm } from '../components/inbox-filter-form';
import { InboxTable } from '../components/inbox-table';
import { ErrorNotice, Loading, PageHeader, Pager } from '../components/ui';
import { useLoad } from '../components/use-load';
import { href, hrefWithQuery } from '../lib/route-match';
import { hasInboxFilters, inboxFiltersFromQuery, inboxFiltersToQuery } from '../lib/inbox-filters';
import type { PageProps } from './page-props';

/** What an empty inbox says: how mail gets here, since a developer lands on it before any test send. */
function EmptyInbox(props: { org: string }) {
  return (
    <section class="card inbox-empty" aria-label="The test inbox is empty">
      <h2>The test inbox is empty</h2>
      <p>
        Send with a test key (<code>sk_test_…</code>) and every message lands here as its recipients would get it: nothing leaves
        this machine and no credit is taken.
      </p>
      <p>
        Make a test key on the <a href={href('orgs', props.org, 'keys')}>Keys page</a> (Mode: Test), then send to{' '}
        <code>delivered@simulator.mailroom.test</code> or any address.
      </p>
    </section>
  );
}

/**
 * `#/orgs/:org/test-inbox?to=&template_id=&q=&cursor=`: every message sent with a test key, as
 * composed for its recipients, newest first. Emptying it removes the captured copies only: the
 * messages and their timelines stay in the history (Messages, Test).
 */
export function TestInbox(props: PageProps) {
  const org = props.params.org ?? '';
  const queryText = props.query.toString();
  const filters = inboxFiltersFromQuery(props.query);
  const cursor = props.query.get('cursor') ?? undefined;
  const page = useLoad(() => testInboxApi.list(org, inboxFiltersToQuery(filters, cursor)), [org, queryText]);
  const templates = useLoad(() => templatesApi.ids(org), [org]);
  const [failure, setFailure] = useState<unknown>();
  const here = (c?: string) => hrefWithQuery(['orgs', org, 'test-inbox'], inboxFiltersToQuery(filters, c));
  const empty = async () => {
    setFailure(undefined);
    if (!window.confirm('Empty the test inbox? The captured copies are deleted; the messages stay in the history.')) return;
    try {
      await testInboxApi.empty(org);
      await page.reload();
    } catch (err) {
      setFailure(err);
    }
  };
  const items = page.data?.items ?? [];
  // The one test of emptiness (the card below says so; no separate notice that a Reload could leave stale).
  const isEmpty = !hasInboxFilters(filters) && cursor === undefined && page.data !== undefined && items.length === 0;
  return (
    <>
      <PageHeader title="Test inbox">
        <a class="btn btn-plain" href={hrefWithQuery(['orgs', org, 'messages'], { mode: 'test' })}>
          Test messages
        </a>
        <button type="button" class="btn btn-plain" onClick={() => void page.reload()}>
          Reload
        </button>
        <button type="button" class="btn btn-danger" onClick={() => void empty()} disabled={isEmpty}>
          Empty inbox
        </button>
      </PageHeader>
      <ErrorNotice error={failure} />
      {/* Nothing to filter in an empty inbox: the page says how to fill it instead. */}
      {!isEmpty && <InboxFilterForm key={queryText} org={org} filters={filters} templates={templates.data} />}
      <ErrorNotice error={page.error} />
      {page.loading && page.data === undefined ? (
        <Loading />
      ) : (
        page.data !== undefined &&
        (isEmpty ? (
          <EmptyInbox org={org} />
        ) : (
          <section class="card" aria-label="Captured messages">
            <InboxTable org={org} items={items} />
            <Pager first={cursor !== undefined && here()} next={page.data.next_cursor !== null && here(page.data.next_cursor)} />
          </section>
        ))
      )}
    </>
  );
}
