import '../ops-pages.css';
import { api, orgPath } from '../api/client';
import { listMessages } from '../api/messages';
import { MessageFilterForm } from '../components/message-filter-form';
import { MessageTable } from '../components/message-table';
import { ModeToggle } from '../components/mode-toggle';
import { ErrorNotice, Loading, Notice, PageHeader } from '../components/ui';
import { useLoad } from '../components/use-load';
import { filterProblems, filtersFromQuery, filtersToQuery, hasFilters } from '../lib/message-filters';
import { href, hrefWithQuery } from '../lib/route-match';
import { type Mode, modeFromQuery, modeQuery } from '../lib/test-mode';
import type { PageProps } from './page-props';

/** The ids of the organization's templates and services, for the filter's selects (best effort). */
async function ids(org: string, what: 'templates' | 'services'): Promise<string[] | undefined> {
  try {
    return (await api.get<{ items: Array<{ id: string }> }>(orgPath(org, what))).items.map((i) => i.id);
  } catch {
    return undefined;
  }
}

/**
 * `#/orgs/:org/messages?status=&template_id=&service_id=&from=&to=&q=&cursor=[&limit=][&mode=test]`: the
 * history, newest first, filtered by the hash query and paged with the server's cursor; live messages
 * unless the link says `mode=test` (issue 27: the two never mix).
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
  const choices = useLoad(async () => ({ templates: await ids(org, 'templates'), services: await ids(org, 'services') }), [org]);
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
          Sent with a test key: captured in the <a href={href('orgs', org, 'test-inbox')}>Test inbox</a>, never delivered, never
          charged.
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
            <MessageTable org={org} items={page.data.items} filtered={hasFilters(filters)} mode={mode} />
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
        )
      )}
    </>
  );
}
