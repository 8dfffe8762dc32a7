import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { receiveProviderEvents, type IntakeDeps } from '../../events/intake.js';
import { storeIntakeDeps } from '../../events/wiring.js';
import type { App, AppServices } from '../app-types.js';
import { responses } from '../schemas.js';

/**
 * POST /v1/provider-events/:token: where Postmark, Mailgun, Resend, SendGrid and SES (SNS) post
 * what happened to our mail after hand-off. Signatures are over the exact bytes, so this route
 * (and only this one, in its own encapsulated scope) keeps the body as a Buffer whatever its
 * content type (SNS posts JSON as text/plain), up to 1 MB.
 */

export const PROVIDER_EVENTS_BODY_LIMIT = 1024 * 1024;

// No pattern or length here: any token that names no service is the same 404 (past Fastify's
// maxParamLength, 100, the router answers 400 bad_request before any lookup).
const Params = Type.Object({ token: Type.String() });

const Summary = Type.Object({
  received: Type.Integer({ description: 'Events the request carried that mailroom reads' }),
  recorded: Type.Integer(),
  duplicates: Type.Integer({ description: 'Seen before (providers retry): recorded once' }),
  unmatched: Type.Integer({ description: "About no message of this service's organization: kept, counted, logged at warn" }),
});

/** Lower-cased names, one value each (a repeated header's first). */
function headersOf(raw: Record<string, string | string[] | undefined>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(raw)) out[name.toLowerCase()] = Array.isArray(value) ? value[0] : value;
  return out;
}

export async function registerProviderEvents(app: App, deps: Omit<IntakeDeps, 'warn'>, baseUrl: string): Promise<void> {
  await app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: PROVIDER_EVENTS_BODY_LIMIT }, (_request, body, done) => {
      done(null, body);
    });
    scope.post(
      '/v1/provider-events/:token',
      {
        bodyLimit: PROVIDER_EVENTS_BODY_LIMIT,
        schema: {
          tags: ['Provider events'],
          summary: "Receive a provider's delivery, bounce and complaint events",
          description:
            "The URL is the service's `events_url` (admin API); its token is the only thing that names the service. The " +
            'request is verified as its provider signs it (service `events` settings); a failed check is 401 ' +
            '`unauthorized` and records nothing. Unknown tokens and services without `events` settings are 404. Events ' +
            'are stored before the 2xx; duplicates and events matching no message are 2xx too, so providers stop retrying.',
          params: Params,
          response: responses({ 200: Summary }, [
            'bad_request',
            'invalid_body',
            'unauthorized',
            'not_found',
            'payload_too_large',
            'service_unavailable',
          ]),
        },
      },
      async (request) => {
        const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        return receiveProviderEvents(
          {
            ...deps,
            warn: (detail, message) => request.log.warn(detail, message),
          },
          request.params.token,
          {
            headers: headersOf(request.headers),
            rawBody,
            url: `${baseUrl}${request.url}`,
          },
        );
      },
    );
  });
}

/** The route as `mailroom serve` runs it: the intake as the events room wires it (events/wiring.ts). */
export async function registerProviderEventsRoute(
  app: App,
  { store, clock, metrics, config, notifier }: AppServices,
): Promise<void> {
  const intake = storeIntakeDeps({
    store,
    clock,
    metrics,
    logger: app.log,
    snsCertHosts: config.snsCertHosts,
    ...(notifier === undefined ? {} : { notifier }),
  });
  await registerProviderEvents(app, intake, config.baseUrl);
}
