/**
 * The plumbing both list filter forms share (Messages: message-filter-form.tsx, the test inbox:
 * inbox-filter-form.tsx): a draft copy of the filters, Apply writing them into the hash query
 * (the list reloads from the link, so a filtered view can be shared) and Clear going back to none.
 * Below 720 px the fields fold behind a "Filters" disclosure, open when a filter is set, so the
 * list is not pushed below a phone's fold (review C, S4: the form was ~560 px tall).
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { hrefWithQuery } from '../lib/route-match';
import { navigate } from '../router';

/** The draft filters and what changes them; `apply` and `clear` navigate. */
export function useHashFilters<F extends object>(options: {
  initial: F;
  empty: F;
  /** The route's segments, e.g. `['orgs', org, 'messages']`. */
  segments: string[];
  /** The filters as the link's query (the page's other parameters, like `mode`, added by the caller). */
  toQuery: (f: F) => Record<string, string | undefined>;
  /** Problems that keep Apply from navigating (shown once Apply was pressed); none by default. */
  problems?: (f: F) => Record<string, string>;
}) {
  const [f, setF] = useState<F>(options.initial);
  const [shown, setShown] = useState(false);
  const problemsOf = options.problems ?? ((): Record<string, string> => ({}));
  const go = (filters: F) => navigate(hrefWithQuery(options.segments, options.toQuery(filters)));
  return {
    f,
    set: (patch: Partial<F>) => setF({ ...f, ...patch }),
    problems: shown ? problemsOf(f) : ({} as Record<string, string>),
    apply: (e: Event) => {
      e.preventDefault();
      setShown(true);
      if (Object.keys(problemsOf(f)).length === 0) go(f);
    },
    clear: () => {
      setF(options.empty);
      setShown(false);
      go(options.empty);
    },
  };
}

const NARROW = '(max-width: 720px)';

/**
 * The form's frame: its fields in a `<details>` that is always open on a wide screen (CSS ignores
 * the summary there) and folded on a phone unless a filter is `active`; then Apply and Clear.
 */
export function FilterForm(props: {
  label: string;
  active: boolean;
  onSubmit: (e: Event) => void;
  onClear: () => void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDetailsElement>(null);
  const [narrow] = useState(() => window.matchMedia(NARROW).matches);
  // Widened past 720 px with the fold closed: the summary is hidden there (CSS), so open it.
  useEffect(() => {
    const query = window.matchMedia(NARROW);
    const widened = () => {
      if (!query.matches && ref.current !== null) ref.current.open = true;
    };
    query.addEventListener('change', widened);
    return () => query.removeEventListener('change', widened);
  }, []);
  return (
    <form class="card message-filters" onSubmit={props.onSubmit} aria-label={props.label}>
      <details ref={ref} class="filter-fold" open={!narrow || props.active}>
        <summary>Filters{props.active ? ' (active)' : ''}</summary>
        {props.children}
        <div class="form-actions">
          <button type="submit" class="btn btn-primary">
            Apply filters
          </button>
          <button type="button" class="btn btn-plain" onClick={props.onClear}>
            Clear
          </button>
        </div>
      </details>
    </form>
  );
}
