import { Type } from '@sinclair/typebox';
import type { App, AppServices } from '../app-types.js';
import { responses } from '../schemas.js';

const PublicConfig = Type.Object({
  turnstile_site_key: Type.Union([Type.String(), Type.Null()], {
    description: "Site key of the service's shared mobile CAPTCHA widget",
  }),
  turnstile_widget_url: Type.String({
    format: 'uri',
    description:
      'Page that renders that widget and hands the token back to an app. Apps append `?public_key=pk_…&redirect_uri=…`; ' +
      "the redirect must use one of the organization's mobile_app_schemes or be on its allowed_origins. Without redirect_uri " +
      'the token goes only to the web view bridge (React Native ' +
      'postMessage, WKWebView handler "turnstile", Android onTurnstile).',
  }),
  api_base_url: Type.String({ format: 'uri' }),
});

/** GET /v1/public-config: no key, cacheable for the spec's hour. */
export function registerPublicConfig(app: App, { config }: AppServices): void {
  app.get(
    '/v1/public-config',
    {
      schema: { tags: ['service'], summary: 'Public client configuration', response: responses({ 200: PublicConfig }, []) },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=3600');
      return {
        turnstile_site_key: config.turnstile.siteKey ?? null,
        turnstile_widget_url: `${config.baseUrl}/widget/turnstile`,
        api_base_url: config.baseUrl,
      };
    },
  );
}
