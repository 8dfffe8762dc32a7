/**
 * What the send path and the protection checks need to know about the client of a request,
 * whatever route (or, later, provider intake) it came through: plain values the HTTP layer reads
 * from the request (src/http/headers.ts `clientInfo`). `ip` is Fastify's `request.ip`: the
 * socket address, or the left-most address of `X-Forwarded-For` not added by a trusted proxy
 * when MAILROOM_TRUST_PROXY names the proxies (from any other peer the header is ignored).
 */
export interface ClientInfo {
  ip: string;
  origin: string | undefined;
  referer: string | undefined;
  userAgent: string | undefined;
  /** `Sec-CH-UA` client hint (brands), when the browser sends it. */
  secChUa: string | undefined;
}
