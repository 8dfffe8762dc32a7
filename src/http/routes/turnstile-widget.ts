import type { FastifyReply } from 'fastify';
import { keyAuthenticates } from '../../domain/caller.js';
import type { Organization } from '../../domain/types.js';
import { checkWidgetRedirect, type WidgetRedirect } from '../../protection/widget-redirect.js';
import type { Store } from '../../storage/store.js';
import type { App, AppServices } from '../app-types.js';
import { ERROR_CSP, WIDGET_CSP, widgetErrorHtml, widgetPageHtml } from '../widget-page.js';

/**
 * The page behind `turnstile_widget_url`: a mobile app opens it in a web view as
 * `?public_key=pk_…&redirect_uri=myapp://…` (`user_id` is EmailJS's name for the public key), the
 * shared widget runs, and the token goes back through the view's bridge or, failing all, a
 * redirect that the organization allows. Without redirect_uri the page only uses the bridges.
 */

const REFUSALS: Record<Exclude<WidgetRedirect, { ok: true }>['reason'], string> = {
  unparseable: 'redirect_uri is not an absolute URL.',
  too_long: 'redirect_uri is too long.',
  scheme_not_allowed: 'The scheme of redirect_uri is not one of the mobile app schemes of the organization.',
  mobile_apps_not_allowed: 'The organization does not allow mobile apps, so no app scheme is accepted.',
  origin_not_allowed: 'The origin of redirect_uri is not on the allowed origins of the organization.',
  insecure_origin: 'redirect_uri must use https (http only for localhost).',
  credentials_in_url: 'redirect_uri must not carry a user name or password.',
};

/** One string value of the query, or undefined; a repeated parameter is refused as ambiguous. */
function single(query: unknown, name: string): string | undefined | null {
  const value = (query as Record<string, unknown> | null)?.[name];
  if (value === undefined || value === '') return undefined;
  return typeof value === 'string' ? value : null;
}

/**
 * The organization of a public key that authenticates now (as for sends: active, or rotated and
 * inside its grace period). Private keys never belong in a URL: refused too.
 */
async function publicKeyOrg(store: Store, value: string): Promise<Organization | undefined> {
  if (!value.startsWith('pk_')) return undefined;
  const key = await store.catalog.keyByValue(value);
  if (key === undefined || key.type !== 'public' || !keyAuthenticates(key, store.clock.now())) return undefined;
  return store.catalog.organization(key.org_id);
}

function send(reply: FastifyReply, status: number, csp: string, html: string): FastifyReply {
  // The page depends on the query and the organization's current settings: never cached or shared.
  return reply
    .code(status)
    .header('cache-control', 'private, no-store')
    .header('content-security-policy', csp)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .type('text/html; charset=utf-8')
    .send(html);
}

export function registerTurnstileWidget(app: App, { config, store }: AppServices): void {
  app.get('/widget/turnstile', { schema: { hide: true } }, async (request, reply) => {
    const refuse = (message: string) => send(reply, 400, ERROR_CSP, widgetErrorHtml(message));
    const publicKey = single(request.query, 'public_key');
    const userId = single(request.query, 'user_id');
    const redirectUri = single(request.query, 'redirect_uri');
    if (publicKey === null || userId === null || redirectUri === null) return refuse('A parameter was given more than once.');
    if (publicKey !== undefined && userId !== undefined && publicKey !== userId)
      return refuse('public_key and user_id name different keys.');
    const keyValue = publicKey ?? userId;

    if (keyValue === undefined) {
      if (redirectUri !== undefined) return refuse('redirect_uri needs the public_key of the organization that allows it.');
      return send(reply, 200, WIDGET_CSP, widgetPageHtml({ siteKey: config.turnstile.siteKey ?? '', redirect: undefined }));
    }
    const org = await publicKeyOrg(store, keyValue);
    if (org === undefined) return refuse('Unknown or inactive public key.');
    let redirect: string | undefined;
    if (redirectUri !== undefined) {
      const checked = checkWidgetRedirect(org.security, redirectUri);
      if (!checked.ok) return refuse(REFUSALS[checked.reason]);
      redirect = checked.href;
    }
    return send(reply, 200, WIDGET_CSP, widgetPageHtml({ siteKey: config.turnstile.siteKey ?? '', redirect }));
  });
}
