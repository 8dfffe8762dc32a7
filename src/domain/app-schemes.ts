/**
 * Schemes a browser or web view acts on itself (script, inline documents, local files, its own
 * pages) or that belong to the web-origin rule of the widget redirect. They are never an app's
 * scheme: handing a CAPTCHA token to `javascript:` runs script on our origin. The settings refuse
 * them when an organization is written, and the widget page refuses them again when it is served.
 */
export const NEVER_APP_SCHEMES: readonly string[] = [
  'javascript',
  'data',
  'vbscript',
  'blob',
  'file',
  'filesystem',
  'about',
  'view-source',
  'http',
  'https',
  'ws',
  'wss',
  'ftp',
  'intent',
  'chrome',
  'chrome-extension',
  'content',
  'jar',
];

/** (The names hold only a-z and '-', which need no escaping, even under the u flag.)
 * A lowercase URL scheme (RFC 3986 §3.1) of 2 to 64 characters that is none of the above. */
export const APP_SCHEME_PATTERN = `^(?!(?:${NEVER_APP_SCHEMES.join('|')})$)[a-z][a-z0-9+.-]{1,63}$`;
