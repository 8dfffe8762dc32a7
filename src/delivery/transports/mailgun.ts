import {
  type DeliveryError,
  ServiceTestError,
  type DeliveryReceipt,
  type Transport,
  type TransportFactory,
} from '../transport.js';
import type { Service } from '../../domain/types.js';
import { createProviderHttp, type ProviderHttp, type ProviderHttpOptions, type ProviderResponse } from './http-client.js';
import {
  describe,
  isRecord,
  jsonObject,
  permanent,
  retryAfterMs,
  service,
  str,
  temporary,
  throttled,
  VERIFY_TIMEOUT_MS,
  verifyFailure,
  verifyRequest,
} from './http-errors.js';
import { endpointOf, optionalString, requiredString, settingsBlock } from './provider-mail.js';
import { rawComposer } from './raw-mime.js';

/**
 * Mailgun through its HTTP API: `POST /v3/<domain>/messages.mime` with the raw MIME nodemailer
 * composes (as the outbox writes it), multipart/form-data, HTTP Basic `api:<api_key>`.
 *
 * Settings (`service.settings.mailgun`):
 * - `domain`: required: the sending domain as Mailgun lists it
 * - `api_key`: required: an account key, or a domain sending key (which can send but not run the service test)
 * - `region`: `us` (default, https://api.mailgun.net) or `eu` (https://api.eu.mailgun.net); a domain works only in its own region
 * - `endpoint`: optional base URL replacing the region's
 *
 * `to` lists every envelope recipient, one field each (bcc only there: the MIME carries no Bcc
 * header; a retry for some recipients names only those); `message` is the MIME as a file part;
 * our message id goes as `v:mailroom_message_id` (events' user-variables). Our Message-ID header
 * is in the MIME and Mailgun keeps it, so the answer's `id` is usually it; the sent event records
 * `id` without its angle brackets.
 *
 * Errors (documentation.mailgun.com, API Response Codes):
 * HTTP → outcome — Doc wording:
 * - 429 → deferred, not before Retry-After when given; pacing slowed — "Please retry these requests as defined in the response"
 * - 500, 502, 503, 504 (any 5xx), timeouts, connection errors → deferred — "Server Errors – something is wrong on Mailgun's end";
 *   "Retries are recommended"
 * - 401 (body `Forbidden`) → held_service_error — "Unauthorized – No valid API key provided" (also a domain of the other region)
 * - 403 → held_service_error — "Auth error or access denied" (e.g. a sandbox domain and an unauthorized recipient)
 * - 404 → held_service_error — "Not Found": on send, the domain is not found, so settings.domain is wrong
 * - 402 → held_service_error (a judgement call: the account's state, not the message, is at fault; failing would lose mail an
 *   operator can release) — "Request Failed – Parameters were valid but request failed"
 * - 400, 413 → failed — "Bad Request – Often missing a required parameter" / request too large
 * - any other 4xx → failed
 * - 3xx (no redirect is followed) → held_service_error — the endpoint setting points somewhere else
 * - endpoint name does not resolve, TLS certificate refused → held_service_error — a setting to fix
 *
 * Mailgun never refuses a single recipient synchronously (suppressed addresses are dropped later,
 * as events), so there is no bounce row.
 *
 * Service test: `GET /v3/domains/<domain>`. 401/403 → `auth` (a domain sending key is refused
 * this lookup though it may send); 404 → `other` (no such domain in this region); a domain whose
 * `state` is `unverified` → `unverified_sender`, `disabled` → `other`.
 */

export interface MailgunSettings {
  domain: string;
  apiKey: string;
  region: 'us' | 'eu';
  /** The API's base URL, without a trailing slash. */
  base: string;
}

const BASES = { us: 'https://api.mailgun.net', eu: 'https://api.eu.mailgun.net' } as const;
const DOMAIN = /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

/**
 * `settings.mailgun`, checked (provider-mail.ts's readers); throws (the service is then held: brokenTransport) naming the field.
 */
export function readMailgunSettings(svc: Pick<Service, 'id' | 'settings'>): MailgunSettings {
  const block = settingsBlock(svc, 'mailgun');
  const domain = requiredString(block, 'mailgun', 'domain');
  if (!DOMAIN.test(domain)) throw new Error('mailgun.domain: must be a domain name such as mg.example.com');
  const apiKey = requiredString(block, 'mailgun', 'api_key');
  const region = optionalString(block, 'mailgun', 'region', 'us');
  if (region !== 'us' && region !== 'eu') throw new Error('mailgun.region: must be us or eu');
  return { domain, apiKey, region, base: endpointOf(block, 'mailgun', BASES[region]) };
}

/** The outcome of a send's answer other than 2xx (the table above). */
export function mailgunFailure(
  res: ProviderResponse,
  settings: Pick<MailgunSettings, 'domain' | 'region'>,
  now: number,
): DeliveryError {
  const s = res.status;
  const text = `mailgun ${describe(s, res.body)}`;
  if (s === 429) return throttled(text, retryAfterMs(res.headers, now));
  if (s >= 500) return temporary(text, retryAfterMs(res.headers, now));
  if (s === 401)
    return service(`${text} (the api_key is not valid for the ${settings.region} region; a domain works only in its own region)`);
  if (s === 404)
    return service(`${text} (the domain ${settings.domain} is not found: check the service's mailgun.domain and region)`);
  if (s === 402 || s === 403) return service(text);
  if (s >= 400) return permanent(text);
  return service(`${text} (an answer that is neither success nor error: check the service's endpoint)`);
}

/** Mailgun's `id` is `<…>`; events carry it without the brackets. */
export function mailgunReceipt(res: ProviderResponse): DeliveryReceipt {
  const json = jsonObject(res.body);
  const raw = str(json?.id)?.trim() ?? '';
  const id = raw.replace(/^<(.*)>$/, '$1');
  const message = str(json?.message) ?? '';
  const response = `mailgun ${res.status} ${message}${id !== '' ? ` ${raw}` : ''}`.trim().replace(/\s+/g, ' ');
  return id !== '' ? { response, providerMessageId: id } : { response };
}

export const mailgunTransport: TransportFactory = (svc, context) => createMailgunTransport({})(svc, context);

export interface MailgunTransportOptions {
  /** The HTTP client's per-request deadline (default 30 s; the service test's 10 s or less); tests shorten it. */
  timeoutMs?: number;
  /** The HTTP client (default createProviderHttp); tests wrap it to see the requests' options. */
  http?: (options: ProviderHttpOptions) => ProviderHttp;
}

export const createMailgunTransport =
  (options: MailgunTransportOptions): TransportFactory =>
  (svc): Transport => {
    const settings = readMailgunSettings(svc);
    const http = (options.http ?? createProviderHttp)({
      provider: 'mailgun',
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    });
    const verifyTimeoutMs = Math.min(VERIFY_TIMEOUT_MS, options.timeoutMs ?? VERIFY_TIMEOUT_MS);
    const composer = rawComposer();
    const authorization = `Basic ${Buffer.from(`api:${settings.apiKey}`).toString('base64')}`;
    const domainPath = encodeURIComponent(settings.domain);
    return {
      async send(mail) {
        const raw = await composer.compose(mail);
        const form = new FormData();
        // One field per recipient: an address may hold a comma in a quoted local part.
        for (const to of raw.recipients) form.append('to', to);
        form.append('message', new Blob([raw.bytes], { type: 'message/rfc822' }), 'MimeMessage');
        form.append('v:mailroom_message_id', mail.messageId);
        const res = await http.request({
          method: 'POST',
          url: `${settings.base}/v3/${domainPath}/messages.mime`,
          headers: { authorization, accept: 'application/json' },
          body: { multipart: form },
        });
        if (res.status >= 200 && res.status < 300) return mailgunReceipt(res);
        throw mailgunFailure(res, settings, Date.now());
      },
      async verify() {
        const res = await verifyRequest(
          http,
          {
            method: 'GET',
            url: `${settings.base}/v3/domains/${domainPath}`,
            headers: { authorization, accept: 'application/json' },
          },
          verifyTimeoutMs,
        );
        const text = `mailgun ${describe(res.status, res.body)}`;
        if (res.status === 401 || res.status === 403) {
          throw new ServiceTestError(
            'auth',
            `${text} (check api_key and region ${settings.region}; a domain sending key may send but is refused this lookup)`,
          );
        }
        if (res.status === 404)
          throw new ServiceTestError(
            'other',
            `${text} (no domain ${settings.domain} in this account's ${settings.region} region)`,
          );
        if (res.status < 200 || res.status >= 300) throw verifyFailure(res.status, text);
        const domain = jsonObject(res.body)?.domain;
        const state = isRecord(domain) ? str(domain.state) : undefined;
        if (state === 'unverified')
          throw new ServiceTestError(
            'unverified_sender',
            `mailgun: the domain ${settings.domain} is unverified (its DNS records are not confirmed yet)`,
          );
        if (state === 'disabled') throw new ServiceTestError('other', `mailgun: the domain ${settings.domain} is disabled`);
      },
      async close() {
        composer.close();
        await http.close();
      },
    };
  };
