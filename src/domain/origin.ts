import type { Organization } from './types.js';
import { ApiError } from '../errors/api-error.js';

export interface RequestOrigin {
  origin: string | undefined;
  referer: string | undefined;
}

/** `https://app.example.com:8443/x` → `app.example.com:8443`; unparseable → undefined. */
function hostOf(url: string): { host: string; hostname: string } | undefined {
  try {
    const u = new URL(url);
    return u.hostname === '' ? undefined : { host: u.host.toLowerCase(), hostname: u.hostname.toLowerCase() };
  } catch {
    return undefined;
  }
}

/**
 * `example.com` matches that host on any port; `*.example.com` matches its subdomains (not the
 * apex: list both when both send); an entry with a port matches only that port.
 */
export function originAllowed(allowed: readonly string[], url: string): boolean {
  const h = hostOf(url);
  if (h === undefined) return false;
  return allowed.some((entry) => {
    const e = entry.toLowerCase();
    const target = e.includes(':') ? h.host : h.hostname;
    if (e.startsWith('*.')) return target.endsWith(e.slice(1)) && target.length > e.length - 1;
    return target === e;
  });
}

/**
 * Authentication rules 5 and 6 for public keys: a web page's Origin (or, without one, its
 * Referer) must be on the allowed list; a request with neither is an app or a server and
 * needs "allow mobile apps", even when the list is empty.
 */
export function checkPublicOrigin(org: Organization, req: RequestOrigin): void {
  const source = req.origin ?? req.referer;
  if (source === undefined) {
    if (org.security.allow_mobile_apps) return;
    throw new ApiError('origin_not_allowed', {
      message: 'Requests without Origin or Referer need the "Allow mobile apps" setting.',
      details: { reason: 'no_origin' },
    });
  }
  if (!originAllowed(org.security.allowed_origins, source)) {
    throw new ApiError('origin_not_allowed', { details: { origin: hostOf(source)?.host ?? source } });
  }
}
