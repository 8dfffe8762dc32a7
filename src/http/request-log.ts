import type { FastifyRequest } from 'fastify';

/**
 * What the per-request log line says the path was. Secrets travel in some URLs: the events
 * token of `POST /v1/provider-events/:token` (a 32-character capability that names a service),
 * a status token or an upload signature in a query string. The query is never logged; a route
 * parameter named here is logged as its name (`/v1/provider-events/:token`), the rest of the
 * path as sent, so a message id or an organization still shows where it helps.
 */
const SECRET_PARAMS = new Set(['token']);

/**
 * A path no route matched (a 404) is not known to hold no secret (a token sent to a mistyped
 * route, `/v1/provider-events/<token>/x`): its segments of this many characters or more are
 * masked. 16 is below every token and key this server issues (events tokens 32, status tokens
 * 35, private keys 46) and above the words a path is made of.
 */
const MASK_FROM = 16;

export function loggedPath(request: FastifyRequest): string {
  const path = request.url.split('?')[0] ?? '/';
  const pattern = request.routeOptions.url;
  if (pattern === undefined)
    return path
      .split('/')
      .map((s) => (s.length >= MASK_FROM ? ':masked' : s))
      .join('/');
  const wanted = pattern.split('/');
  return path
    .split('/')
    .map((segment, i) => {
      const name = wanted[i];
      return name?.startsWith(':') && SECRET_PARAMS.has(name.slice(1)) ? name : segment;
    })
    .join('/');
}
