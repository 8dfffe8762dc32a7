/**
 * A page loaded on first use, through a dynamic import() of its own chunk (a same-origin
 * script, which the UI's `script-src 'self'` allows). The template editor pulls in CodeMirror,
 * most of the bundle's weight: sign-in and the other pages no longer download it.
 */
import type { ComponentType, FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorNotice, Loading } from './ui';

export function lazyPage<P extends object>(load: () => Promise<ComponentType<P>>): FunctionComponent<P> {
  // One download per page for the whole session; a failed one is tried again on the next visit.
  let loaded: ComponentType<P> | undefined;
  let pending: Promise<ComponentType<P>> | undefined;
  const fetchPage = () => {
    pending ??= load().then(
      (page) => {
        loaded = page;
        return page;
      },
      (error: unknown) => {
        pending = undefined;
        throw error;
      },
    );
    return pending;
  };
  // biome-ignore lint/correctness/noComponentHookFactories: made once per page at module level (the routes), never in a render.
  return function LazyPage(props: P) {
    const [page, setPage] = useState<{ component: ComponentType<P> } | undefined>(
      loaded === undefined ? undefined : { component: loaded },
    );
    const [error, setError] = useState<unknown>();
    useEffect(() => {
      if (page !== undefined) return undefined;
      let live = true;
      fetchPage().then(
        (component) => {
          if (live) setPage({ component });
        },
        (e: unknown) => {
          if (live) setError(e);
        },
      );
      return () => {
        live = false;
      };
    }, [page]);
    if (error !== undefined) {
      // Most likely a new version was deployed and the old chunk's file is gone: a reload fetches the new one.
      return (
        <>
          <ErrorNotice error={error} />
          <p>
            This page could not be loaded.{' '}
            <button type="button" class="btn btn-plain" onClick={() => window.location.reload()}>
              Reload
            </button>
          </p>
        </>
      );
    }
    if (page === undefined) return <Loading />;
    const Page = page.component;
    return <Page {...props} />;
  };
}
