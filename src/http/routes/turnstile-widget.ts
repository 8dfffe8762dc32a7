import type { App, AppServices } from '../app-types.js';

/**
 * The page behind `turnstile_widget_url`: a mobile app opens it in a web view, the shared
 * widget runs, and the token goes back to the app through whichever bridge the view offers
 * (React Native's postMessage, a WKWebView handler, an Android JS interface), or, failing all,
 * a redirect to `?redirect_uri=…#token=…` that the app intercepts.
 */
export function registerTurnstileWidget(app: App, { config }: AppServices): void {
  app.get('/widget/turnstile', { schema: { hide: true } }, async (_request, reply) => {
    const siteKey = JSON.stringify(config.turnstile.siteKey ?? '');
    reply.header('cache-control', 'public, max-age=3600');
    return reply.type('text/html; charset=utf-8').send(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Verification</title>
<script src="https://challenges.cloudflare.com/turnstile/v0/api.js?onload=mrReady&render=explicit" async defer></script>
<style>body{display:flex;justify-content:center;align-items:center;min-height:90vh;margin:0;font-family:system-ui,sans-serif}</style>
</head><body><div id="widget"></div><p id="status" role="status"></p>
<script>
var SITE_KEY = ${siteKey.replace(/</g, '\\u003c')};
function deliver(message) {
  var text = JSON.stringify(message);
  if (window.ReactNativeWebView) return window.ReactNativeWebView.postMessage(text);
  if (window.webkit && window.webkit.messageHandlers && window.webkit.messageHandlers.turnstile) return window.webkit.messageHandlers.turnstile.postMessage(message);
  if (window.Android && window.Android.onTurnstile) return window.Android.onTurnstile(text);
  var back = new URLSearchParams(location.search).get('redirect_uri');
  if (back) location.href = back + '#' + new URLSearchParams(message).toString();
}
function mrReady() {
  if (!SITE_KEY) { document.getElementById('status').textContent = 'The shared CAPTCHA widget is not configured on this server.'; deliver({ error: 'not_configured' }); return; }
  turnstile.render('#widget', {
    sitekey: SITE_KEY,
    callback: function (token) { deliver({ token: token }); },
    'error-callback': function (code) { deliver({ error: String(code) }); },
    'expired-callback': function () { deliver({ error: 'expired' }); }
  });
}
</script></body></html>`);
  });
}
