import type { FastifyRequest } from 'fastify';

/** One request header as a trimmed string; a repeated header gives its first value, a blank one none. */
export function headerValue(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s.trim() === '' ? undefined : s.trim();
}
