/**
 * The UI's routes live in the URL's hash (`#/orgs/acme/templates`), so the server serves one
 * index.html for /ui/ and nothing else, and the UI works under any path prefix. Pure logic
 * (no DOM): unit-tested in test/ui/.
 */
export interface RouteMatch {
  /** The pattern that matched, e.g. `/orgs/:org/templates/:id`. */
  pattern: string;
  params: Readonly<Record<string, string>>;
  /** The query part of the hash (`#/orgs/acme/messages?status=failed`). */
  query: URLSearchParams;
}

/** Splits a hash into its path and query: `#/a/b?x=1` → [`/a/b`, `x=1`]. */
export function splitHash(hash: string): [string, string] {
  const raw = hash.startsWith('#') ? hash.slice(1) : hash;
  const q = raw.indexOf('?');
  const path = q === -1 ? raw : raw.slice(0, q);
  return [path === '' ? '/' : path, q === -1 ? '' : raw.slice(q + 1)];
}

/** The first pattern that matches the hash, with its decoded parameters; undefined if none. */
export function matchRoute(patterns: readonly string[], hash: string): RouteMatch | undefined {
  const [path, query] = splitHash(hash);
  const parts = path.split('/').filter((p) => p !== '');
  for (const pattern of patterns) {
    const want = pattern.split('/').filter((p) => p !== '');
    if (want.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < want.length; i++) {
      const w = want[i] as string;
      const got = parts[i] as string;
      if (w.startsWith(':')) {
        try {
          params[w.slice(1)] = decodeURIComponent(got);
        } catch {
          ok = false;
          break;
        }
      } else if (w !== got) {
        ok = false;
        break;
      }
    }
    if (ok) return { pattern, params, query: new URLSearchParams(query) };
  }
  return undefined;
}

/** Builds a hash link from path segments, each encoded: href('orgs', 'a b') → `#/orgs/a%20b`. */
export function href(...segments: string[]): string {
  return `#/${segments.map(encodeURIComponent).join('/')}`;
}

/** The same with a query string, leaving out empty values. */
export function hrefWithQuery(segments: string[], query: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  return s === '' ? href(...segments) : `${href(...segments)}?${s}`;
}
