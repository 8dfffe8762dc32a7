import { useEffect, useState } from 'preact/hooks';
import { matchRoute, type RouteMatch } from './lib/route-match';

/** The current hash route, re-rendering on every hashchange. */
export function useRoute(patterns: readonly string[]): RouteMatch | undefined {
  const [hash, setHash] = useState(window.location.hash);
  useEffect(() => {
    const update = () => setHash(window.location.hash);
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return matchRoute(patterns, hash);
}

/** Moves to a hash link (`#/orgs/acme`). */
export function navigate(link: string): void {
  window.location.hash = link.startsWith('#') ? link.slice(1) : link;
}
