import { useState } from 'preact/hooks';
import { hrefWithQuery } from '../lib/route-match';
import { navigate } from '../router';
import { Field, Pager } from './ui';

/** The search box of a list: submitting writes `q` into the hash query (and starts at the first page). */
export function SuppressionSearch(props: { org: string; list: string | undefined; q: string; label: string }) {
  const [q, setQ] = useState(props.q);
  const go = (value: string) =>
    navigate(hrefWithQuery(['orgs', props.org, 'suppressions'], { list: props.list, q: value.trim() }));
  return (
    <search aria-label={props.label}>
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          go(q);
        }}
      >
        <Field label={props.label} type="search" value={q} onValue={setQ} placeholder="part of an address" />
        <button type="submit" class="btn btn-plain">
          Search
        </button>
        {props.q !== '' && (
          <button
            type="button"
            class="btn btn-plain"
            onClick={() => {
              setQ('');
              go('');
            }}
          >
            Clear search
          </button>
        )}
      </form>
    </search>
  );
}

/** "First page" / "Next page" links for a cursor-paged list kept in the hash query. */
export function SuppressionPager(props: {
  org: string;
  list: string | undefined;
  q: string;
  cursor: string | undefined;
  next: string | null | undefined;
}) {
  const link = (cursor?: string) => hrefWithQuery(['orgs', props.org, 'suppressions'], { list: props.list, q: props.q, cursor });
  return (
    <Pager
      first={props.cursor !== undefined && link()}
      next={props.next !== null && props.next !== undefined && link(props.next)}
    />
  );
}
