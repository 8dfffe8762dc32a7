import { NEVER_APP_SCHEMES } from '../domain/app-schemes.js';
import { originAllowed } from '../domain/origin.js';
import type { SecuritySettings } from '../domain/types.js';
import { isLoopbackHost } from '../net/loopback.js';

const NEVER: ReadonlySet<string> = new Set(NEVER_APP_SCHEMES);

/** Longer redirect_uri values are refused rather than parsed (no app needs more). */
const MAX_REDIRECT_LENGTH = 2048;

export type WidgetRedirect =
  | { ok: true; href: string }
  | {
      ok: false;
      reason:
        | 'unparseable'
        | 'too_long'
        | 'scheme_not_allowed'
        | 'mobile_apps_not_allowed'
        | 'origin_not_allowed'
        | 'insecure_origin'
        | 'credentials_in_url';
    };

/**
 * Where the shared CAPTCHA widget page may send a solved token: an app scheme the organization
 * names (with "allow mobile apps" on), or a web origin on its allowed list (https, or http for
 * loopback). Returns the URL as the WHATWG parser serializes it, without a fragment (the page
 * puts the token there), so what was checked is exactly what a browser will navigate to.
 */
export function checkWidgetRedirect(security: SecuritySettings, raw: string): WidgetRedirect {
  if (raw.length > MAX_REDIRECT_LENGTH) return { ok: false, reason: 'too_long' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'unparseable' };
  }
  url.hash = '';
  const scheme = url.protocol.slice(0, -1).toLowerCase();

  if (scheme === 'https' || scheme === 'http') {
    if (url.username !== '' || url.password !== '') return { ok: false, reason: 'credentials_in_url' };
    // http:// only for the developer's own machine (isLoopbackHost); everything else must be https.
    if (scheme === 'http' && !isLoopbackHost(url.hostname)) return { ok: false, reason: 'insecure_origin' };
    if (!originAllowed(security.allowed_origins, url.href)) return { ok: false, reason: 'origin_not_allowed' };
    return { ok: true, href: url.href };
  }
  if (NEVER.has(scheme) || !security.mobile_app_schemes.includes(scheme)) {
    return { ok: false, reason: 'scheme_not_allowed' };
  }
  if (!security.allow_mobile_apps) return { ok: false, reason: 'mobile_apps_not_allowed' };
  return { ok: true, href: url.href };
}
