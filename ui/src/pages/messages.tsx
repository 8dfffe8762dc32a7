import '../ops-pages.css';
import { exportMessagesUrl, listMessages } from '../api/messages';
import { servicesApi } from '../api/services';
import { templatesApi } from '../api/templates';
import { BulkBar, useMessageSelection } from '../components/message-bulk';
import { MessageFilterForm } from '../components/message-filter-form';
import { MessageTable } from '../components/message-table';
import { ModeToggle } from '../components/mode-toggle';
import { ErrorNotice, Loading, Notice, PageHeader, Pager } from '../components/ui';
import { useAutoRefresh } from '../components/use-auto-refresh';
import { useLoad } from '../components/use-load';
import { filterProblems, filtersFromQuery, filtersToQuery, hasFilters } from '../lib/message-filters';
import { href, hrefWithQuery } from '../lib/route-match';
import { type Mode, modeFromQuery, modeQuery } from '../lib/test-mode';
import type { PageProps } from './page-props';

/**
 * `#/orgs/:org/messages?status=&template_id=&service_id=&from=&to=&recipient=&subject=&message_id=&q=&cursor=
 * [&limit=][&mode=test]`: the history, newest first, filtered by the hash query and paged with the server's
 * cursor; live messages unless the link says `mode=test` (issue 27: the two never mix). Export CSV downloads
 * the whole filtered list (every page) from the admin API with the session cookie: a plain link, so the
 * browser streams it to disk whatever its size. Auto-refresh reloads the shown page every 10 s.
 */
export function Messages(props: PageProps) {
  const org = props.params.org ?? '';
  const queryText = props.query.toString();
  const filters = filtersFromQuery(props.query);
  const cursor = props.query.get('cursor') ?? undefined;
  // Page size: the server's default (25) unless the link names one (`&limit=100`, kept while paging).
  const limit = props.query.get('limit') ?? undefined;
  const mode = modeFromQuery(props.query);
  const valid = Object.keys(filterProblems(filters)).length === 0;
  const page = useLoad(
    () => (valid ? listMessages(org, { ...filtersToQuery(filters, cursor), limit, mode }) : Promise.resolve(undefined)),
    [org, queryText],
  );
  const selection = useMessageSelection(filters.statuses, page.data?.items, queryText);
  const [autoRefresh, setAutoRefresh] = useAutoRefresh(page.reload);
  const exportUrl = exportMessagesUrl(org, { ...filtersToQuery(filters), ...modeQuery(mode) });
  const choices = useLoad(async () => ({ templates: await templatesApi.ids(org), services: await servicesApi.ids(org) }), [org]);
  const here = (c?: string) =>
    hrefWithQuery(['orgs', org, 'messages'], { ...filtersToQuery(filters, c), limit, ...modeQuery(mode) });
  // A new mode starts at its first page, filters kept: a cursor belongs to one mode's list.
  const inMode = (m: Mode) => hrefWithQuery(['orgs', org, 'messages'], { ...filtersToQuery(filters), limit, ...modeQuery(m) });
  return (
    <>
      <PageHeader title={mode === 'test' ? 'Test messages' : 'Messages'}>
        <ModeToggle mode={mode} link={inMode} />
        <button type="button" class="btn btn-plain" onClick={() => void page.reload()}>
          Reload
        </button>
        <label class="auto-refresh">
          <input type="checkbox" checked={autoRefresh} onChange={(e) => setAutoRefresh((e.target as HTMLInputElement).checked)} />
          Auto-refresh (10 s)
        </label>
        <a class="btn btn-plain" href={exportUrl} download>
          Export CSV
        </a>
      </PageHeader>
      <MessageFilterForm
        key={queryText}
        org={org}
        filters={filters}
        mode={mode}
        templates={choices.data?.templates}
        services={choices.data?.services}
      />
      {mode === 'test' && (
        <Notice kind="info">
          Sent with a test key: each email is captured in the <a href={href('orgs', org, 'test-inbox')}>Test inbox</a> instead of
          leaving this server; the statuses and events are simulated, and no credit is taken.
        </Notice>
      )}
      {!valid && (
        <ErrorNotice
          error={new Error(`The link's filters are not valid: ${Object.values(filterProblems(filters)).join('; ')}.`)}
        />
      )}
      <ErrorNotice error={page.error} />
      {page.loading && page.data === undefined ? (
        <Loading />
      ) : (
        page.data !== undefined && (
          <section class="card" aria-label="Message list">
            <BulkBar org={org} selection={selection} onDone={() => void page.reload()} />
            <MessageTable org={org} items={page.data.items} filtered={hasFilters(filters)} mode={mode} selection={selection} />
            <Pager first={cursor !== undefined && here()} next={page.data.next_cursor !== null && here(page.data.next_cursor)} />
          </section>
        )
      )}
    </>
  );
}
