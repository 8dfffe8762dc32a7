import '../ops-pages.css';
import { useState } from 'preact/hooks';
import { api, orgPath } from '../api/client';
import { testInboxApi } from '../api/test-inbox';
import { InboxFilterForm } from '../components/inbox-filter-form';
import { InboxTable } from '../components/inbox-table';
import { ErrorNotice, Loading, Notice, PageHeader } from '../components/ui';
import { useLoad } from '../components/use-load';
import { href, hrefWithQuery } from '../lib/route-match';
import { hasInboxFilters, inboxFiltersFromQuery, inboxFiltersToQuery } from '../lib/test-mode';
import type { PageProps } from './page-props';

/** The organization's template ids, for the filter's select (best effort: a text field otherwise). */
async function templateIds(org: string): Promise<string[] | undefined> {
  try {
    return (await api.get<{ items: Array<{ id: string }> }>(orgPath(org, 'templates'))).items.map((i) => i.id);
  } catch {
    return undefined;
  }
}

/** What an empty inbox says: how mail gets here, since a developer lands on it before any test send. */
function EmptyInbox(props: { org: string }) {
  return (
    <section class="card inbox-empty" aria-label="The test inbox is empty">
      <h2>No captured messages</h2>
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
  const templates = useLoad(() => templateIds(org), [org]);
  const [failure, setFailure] = useState<unknown>();
  const [emptied, setEmptied] = useState(false);
  const here = (c?: string) => hrefWithQuery(['orgs', org, 'test-inbox'], inboxFiltersToQuery(filters, c));
  const empty = async () => {
    setFailure(undefined);
    setEmptied(false);
    if (!window.confirm('Empty the test inbox? The captured copies are deleted; the messages stay in the history.')) return;
    try {
      await testInboxApi.empty(org);
      setEmptied(true);
      await page.reload();
    } catch (err) {
      setFailure(err);
    }
  };
  const items = page.data?.items ?? [];
  const bare = !hasInboxFilters(filters) && cursor === undefined;
  return (
    <>
      <PageHeader title="Test inbox">
        <a class="btn btn-plain" href={hrefWithQuery(['orgs', org, 'messages'], { mode: 'test' })}>
          Test messages
        </a>
        <button type="button" class="btn btn-plain" onClick={() => void page.reload()}>
          Reload
        </button>
        <button type="button" class="btn btn-danger" onClick={() => void empty()} disabled={bare && items.length === 0}>
          Empty inbox
        </button>
      </PageHeader>
      {emptied && <Notice kind="ok">The test inbox is empty.</Notice>}
      <ErrorNotice error={failure} />
      {/* Nothing to filter in an empty inbox: the page says how to fill it instead. */}
      {!(bare && page.data?.items.length === 0) && (
        <InboxFilterForm key={queryText} org={org} filters={filters} templates={templates.data} />
      )}
      <ErrorNotice error={page.error} />
      {page.loading && page.data === undefined ? (
        <Loading />
      ) : (
        page.data !== undefined &&
        (bare && items.length === 0 ? (
          <EmptyInbox org={org} />
        ) : (
          <section class="card" aria-label="Captured messages">
            <InboxTable org={org} items={items} />
            {(cursor !== undefined || page.data.next_cursor !== null) && (
              <nav class="pager" aria-label="Pages">
                {cursor !== undefined && (
                  <a class="btn btn-plain" href={here()}>
                    First page
                  </a>
                )}
                {page.data.next_cursor !== null && (
                  <a class="btn btn-plain" href={here(page.data.next_cursor)}>
                    Next page
                  </a>
                )}
              </nav>
            )}
          </section>
        ))
      )}
    </>
  );
}
