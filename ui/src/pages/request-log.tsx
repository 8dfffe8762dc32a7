import '../ops-pages.css';
import { requestLogApi } from '../api/request-log';
import { RequestLogFilterForm } from '../components/request-log-filter-form';
import { RequestLogTable } from '../components/request-log-table';
import { ErrorNotice, Loading, PageHeader, Pager } from '../components/ui';
import { useLoad } from '../components/use-load';
import { hrefWithQuery } from '../lib/route-match';
import {
  hasRequestLogFilters,
  requestLogFiltersFromQuery,
  requestLogFiltersToQuery,
  requestLogProblems,
} from '../lib/request-log';
import type { PageProps } from './page-props';

/**
 * `#/orgs/:org/request-log?status=&code=&key_id=&route=&since=&until=&cursor=`: the organization's
 * refused API requests (4xx), newest first, kept MAILROOM_REQUEST_LOG_DAYS (3 by default). A send
 * refused with 422 or 451 is found here with what it sent (never a key or a parameter's value).
 */
export function RequestLog(props: PageProps) {
  const org = props.params.org ?? '';
  const queryText = props.query.toString();
  const filters = requestLogFiltersFromQuery(props.query);
  const cursor = props.query.get('cursor') ?? undefined;
  const problems = Object.values(requestLogProblems(filters));
  const page = useLoad(
    () =>
      problems.length === 0 ? requestLogApi.list(org, requestLogFiltersToQuery(filters, cursor)) : Promise.resolve(undefined),
    [org, queryText],
  );
  const here = (c?: string) => hrefWithQuery(['orgs', org, 'request-log'], requestLogFiltersToQuery(filters, c));
  return (
    <>
      <PageHeader title="Request log">
        <button type="button" class="btn btn-plain" onClick={() => void page.reload()}>
          Reload
        </button>
      </PageHeader>
      <p class="hint">
        Requests the API refused (4xx) with this organization's keys, kept a few days. Keys, tokens and parameter values are never
        kept: only the parameters' names.
      </p>
      <RequestLogFilterForm key={queryText} org={org} filters={filters} />
      {problems.length > 0 && <ErrorNotice error={new Error(`The link's filters are not valid: ${problems.join('; ')}.`)} />}
      <ErrorNotice error={page.error} />
      {page.loading && page.data === undefined ? (
        <Loading />
      ) : (
        page.data !== undefined && (
          <section class="card" aria-label="Refused requests">
            <RequestLogTable items={page.data.items} filtered={hasRequestLogFilters(filters)} />
            <Pager first={cursor !== undefined && here()} next={page.data.next_cursor !== null && here(page.data.next_cursor)} />
          </section>
        )
      )}
    </>
  );
}
