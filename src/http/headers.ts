import type { FastifyRequest } from 'fastify';
import type { ClientInfo } from '../domain/client.js';

/** One request header as a trimmed string; a repeated header gives its first value, a blank one none. */
export function headerValue(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s.trim() === '' ? undefined : s.trim();
}

/**
 * The plain values the domain checks need of a request (key origin rules, per-IP limit,
 * CAPTCHA hostname, headless signs): routes read them here and pass them on, so that send/ and
 * protection/ never see a Fastify request.
 */
export function clientInfo(request: FastifyRequest): ClientInfo {
  return {
    ip: request.ip,
    origin: headerValue(request, 'origin'),
    referer: headerValue(request, 'referer'),
    userAgent: headerValue(request, 'user-agent'),
    secChUa: headerValue(request, 'sec-ch-ua'),
  };
}
