/** What every page gets from the router: the route's parameters and the hash's query. */
export interface PageProps {
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
}
