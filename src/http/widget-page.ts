import { createHash } from 'node:crypto';
import { escapeHtml } from '../errors/reference-page.js';

/**
 * The HTML of the shared CAPTCHA widget page. Its script is a constant: request input reaches
 * the page only as escaped attribute values, and the Content-Security-Policy allows exactly this
 * script (by hash) and Cloudflare's, so nothing from a URL can ever run here.
 */

const TURNSTILE = 'https://challenges.cloudflare.com';

/**
 * Reads the site key and the already validated redirect from the `#widget` element, renders the
 * widget, and hands the outcome to the first bridge the web view offers (React Native, WKWebView,
 * Android) or, without one, navigates to the redirect with the outcome in the fragment. The
 * redirect's scheme is checked once more here, as defence in depth against a server-side slip.
 */
const SCRIPT = `
(function () {
  'use strict';
  var box = document.getElementById('widget');
  var status = document.getElementById('status');
  var siteKey = box.getAttribute('data-site-key') || '';
  var redirect = box.getAttribute('data-redirect-uri') || '';
  var forbidden = ['javascript:', 'data:', 'vbscript:', 'blob:', 'file:', 'filesystem:', 'about:'];
  function redirectTo(message) {
    if (!redirect) return null;
    var url;
    try { url = new URL(redirect); } catch (e) { return null; }
    if (forbidden.indexOf(url.protocol.toLowerCase()) !== -1) return null;
    url.hash = new URLSearchParams(message).toString();
    return url.href;
  }
  function deliver(message) {
    var text = JSON.stringify(message);
    if (window.ReactNativeWebView) return window.ReactNativeWebView.postMessage(text);
    var webkit = window.webkit && window.webkit.messageHandlers && window.webkit.messageHandlers.turnstile;
    if (webkit) return webkit.postMessage(message);
    if (window.Android && window.Android.onTurnstile) return window.Android.onTurnstile(text);
    var target = redirectTo(message);
    if (target) location.assign(target);
  }
  window.mrReady = function () {
    if (!siteKey) {
      status.textContent = 'The shared CAPTCHA widget is not configured on this server.';
      deliver({ error: 'not_configured' });
      return;
    }
    window.turnstile.render('#widget', {
      sitekey: siteKey,
      callback: function (token) { deliver({ token: String(token) }); },
      'error-callback': function (code) { deliver({ error: String(code) }); },
      'expired-callback': function () { deliver({ error: 'expired' }); }
    });
  };
})();
`;

const STYLE =
  'body{display:flex;flex-direction:column;justify-content:center;align-items:center;' +
  'min-height:90vh;margin:0;font-family:system-ui,sans-serif}';

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** Directives both pages share: nothing loads, nothing submits, nothing frames them. */
const LOCKED = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The widget page may run its own script and Cloudflare's, and frame Cloudflare's challenge. */
export const WIDGET_CSP = [
  LOCKED,
  `script-src ${sha256(SCRIPT)} ${TURNSTILE}`,
  `frame-src ${TURNSTILE}`,
  `style-src ${sha256(STYLE)}`,
].join('; ');

/** The error page runs no script at all. */
export const ERROR_CSP = `${LOCKED}; style-src ${sha256(STYLE)}`;

function head(title: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>`;
}

/**
 * The page itself. `redirect` must already have passed checkWidgetRedirect. The constant script
 * comes before Cloudflare's so `mrReady` exists whenever the async api.js calls it.
 */
export function widgetPageHtml(input: { siteKey: string; redirect: string | undefined }): string {
  return `${head('Verification')}<body>
<div id="widget" data-site-key="${escapeHtml(input.siteKey)}" data-redirect-uri="${escapeHtml(input.redirect ?? '')}"></div>
<p id="status" role="status"></p>
<script>${SCRIPT}</script>
<script src="${TURNSTILE}/turnstile/v0/api.js?onload=mrReady&amp;render=explicit" async defer></script>
</body></html>`;
}

/** A refusal: plain text, every value escaped, no script. */
export function widgetErrorHtml(message: string): string {
  return `${head('Verification unavailable')}<body>
<h1>This verification page cannot be used</h1>
<p>${escapeHtml(message)}</p>
</body></html>`;
}
