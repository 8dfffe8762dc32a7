import { performance } from 'node:perf_hooks';
import {
  DeliveryError,
  ServiceTestError,
  type DeliveryReceipt,
  type ServiceTestReason,
  type Transport,
  type TransportFactory,
} from '../delivery/transport.js';
import { ProviderConnectionError } from '../delivery/transports/http-client.js';
import { TRANSPORTS } from '../delivery/transports/index.js';
import { newId } from '../domain/ids.js';
import type { Service } from '../domain/types.js';
import { ApiError } from '../errors/api-error.js';
import type { Store } from '../storage/store.js';
import { isEmailAddress } from '../templates/params.js';
import { invalidFields, requireOrganization } from './routes/common.js';

/**
 * The service test (POST …/services/{id}/test, `mailroom services test`): the service's own
 * transport, built in this process for the test and closed after it, checks its credentials
 * (Transport.verify: SMTP's connect/TLS/AUTH/QUIT, an HTTP provider's read-only call), and with
 * `to` sends one real message through it. Kept apart from the route so the rules read plainly.
 * The same check (Transport.verify) is the circuit breaker's synthetic probe (delivery/probe.ts),
 * which reads ServiceTestError.transient rather than the reason.
 */

export type TestOutcome =
  | { ok: true; latencyMs: number; sent?: { to: string; response: string; providerMessageId?: string; latencyMs: number } }
  | { ok: false; stage: 'build' | 'verify' | 'send'; reason: ServiceTestReason; message: string; kind?: DeliveryError['kind'] };

export interface TestMessage {
  to: string;
  from: { name: string; address: string };
  /** Host part of the test message's Message-ID (the API's base URL host, as for every send). */
  messageIdHost: string;
}

/**
 * What a failed test send says about the service: the transports report a DeliveryError (whose
 * kind is about the message), so the reason is read from it. Connection failures carry their
 * own (ProviderConnectionError); the providers' messages name the rest ("Sender signature not
 * confirmed", "The from address does not match a verified Sender Identity", SMTP's 535).
 */
export function sendFailureReason(error: unknown): ServiceTestReason {
  if (error instanceof ServiceTestError) return error.reason;
  if (error instanceof ProviderConnectionError) return error.reason;
  const text = error instanceof Error ? error.message : String(error);
  if (/not verified|unverified|verified sender|sender identity|sender signature|verify your domain/i.test(text))
    return 'unverified_sender';
  if (
    /\b(530|534|535)\b|authenticat|api[ _-]?key|token|credential|unauthori[sz]ed|forbidden|access ?denied|\b40[13]\b/i.test(text)
  )
    return 'auth';
  if (/\bTLS\b|certificate|\bSSL\b/i.test(text)) return 'tls';
  if (/timed? ?out|timeout|no answer/i.test(text)) return 'timeout';
  if (/ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|does not resolve/i.test(text)) return 'connect';
  return 'other';
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
const elapsed = (since: number): number => Math.max(0, Math.round(performance.now() - since));

function testEmail(message: TestMessage) {
  const messageId = newId('msg');
  return {
    messageId,
    headerMessageId: `<${messageId}@${message.messageIdHost}>`,
    email: {
      subject: 'mailroom service test',
      from: message.from,
      reply_to: [],
      to: [{ name: '', address: message.to }],
      cc: [],
      bcc: [],
      html: '',
      text: 'This message was sent by the service test of mailroom (POST …/services/{id}/test). No reply is needed.\n',
    },
    attachments: [],
  };
}

/** Runs the test; never throws for the service's sake (a bug in a transport is reported as `other`). */
export async function testService(
  factory: TransportFactory,
  service: Service,
  dataDir: string,
  message: TestMessage | undefined,
): Promise<TestOutcome> {
  let transport: Transport;
  try {
    transport = factory(service, { dataDir });
  } catch (error) {
    // Settings the transport cannot use: what the worker would hold the service for.
    return {
      ok: false,
      stage: 'build',
      reason: 'other',
      message: `the transport cannot be built from the service's settings: ${messageOf(error)}`,
    };
  }
  try {
    const started = performance.now();
    try {
      await transport.verify?.();
    } catch (error) {
      const reason: ServiceTestReason = error instanceof ServiceTestError ? error.reason : 'other';
      return { ok: false, stage: 'verify', reason, message: messageOf(error) };
    }
    const latencyMs = elapsed(started);
    if (message === undefined) return { ok: true, latencyMs };
    const sendStarted = performance.now();
    let receipt: DeliveryReceipt;
    try {
      receipt = await transport.send(testEmail(message));
    } catch (error) {
      return {
        ok: false,
        stage: 'send',
        reason: sendFailureReason(error),
        message: messageOf(error),
        ...(error instanceof DeliveryError ? { kind: error.kind } : {}),
      };
    }
    const refused = receipt.refused?.[0];
    if (refused !== undefined) return { ok: false, stage: 'send', reason: 'other', message: refused.reason, kind: refused.kind };
    return {
      ok: true,
      latencyMs,
      sent: {
        to: message.to,
        response: receipt.response.slice(0, 500),
        ...(receipt.providerMessageId !== undefined ? { providerMessageId: receipt.providerMessageId } : {}),
        latencyMs: elapsed(sendStarted),
      },
    };
  } finally {
    await transport.close().catch(() => undefined);
  }
}

/** The route's (and the CLI's) answer: 200's body. */
export interface ServiceTestBody {
  ok: true;
  latency_ms: number;
  sent?: { to: string; response: string; provider_message_id?: string; latency_ms: number };
}

export interface ServiceTestDeps {
  store: Store;
  dataDir: string;
  messageIdHost: string;
}

/**
 * The whole test as the admin API and the CLI run it: 404 for an unknown organization or
 * service, 400 for a `to` that is no address, 422 `sender_not_configured` for a test message
 * from a service without from_email, 502 `provider_error` (details.reason, stage, provider,
 * service_id, and the DeliveryError's kind for a failed send) when the provider says no.
 */
export async function runServiceTest(
  deps: ServiceTestDeps,
  orgId: string,
  serviceId: string,
  rawTo: string | undefined,
): Promise<ServiceTestBody> {
  const org = await requireOrganization(deps.store, orgId);
  const service = await deps.store.services.get(org.id, serviceId);
  if (service === undefined)
    throw new ApiError('not_found', { message: `Service "${serviceId}" does not exist in organization "${org.id}".` });
  return testServiceSettings(deps, service, rawTo);
}

/**
 * The same test of settings given whole: a stored service, or a form's unsaved body (POST
 * …/services/test) with its masked secrets already replaced by the stored ones, where allowed.
 */
export async function testServiceSettings(
  deps: Pick<ServiceTestDeps, 'dataDir' | 'messageIdHost'>,
  service: Service,
  rawTo: string | undefined,
): Promise<ServiceTestBody> {
  const to = rawTo?.trim();
  if (to !== undefined && !isEmailAddress(to)) throw invalidFields([{ field: 'to', message: 'is not an e-mail address' }]);
  const fromEmail = service.settings.from_email;
  if (to !== undefined && (typeof fromEmail !== 'string' || !isEmailAddress(fromEmail))) {
    throw new ApiError('sender_not_configured', {
      message: `Service "${service.id}" has no from_email to send the test message from.`,
    });
  }
  const details = { provider: service.provider, service_id: service.id };
  const factory = TRANSPORTS[service.provider];
  if (factory === undefined) {
    throw new ApiError('provider_error', {
      message: `Provider "${service.provider}" has no transport in this build.`,
      details: { reason: 'other', stage: 'build', ...details },
    });
  }
  const fromName = typeof service.settings.from_name === 'string' ? service.settings.from_name : '';
  const message =
    to === undefined || typeof fromEmail !== 'string'
      ? undefined
      : { to, from: { name: fromName, address: fromEmail }, messageIdHost: deps.messageIdHost };
  const outcome = await testService(factory, service, deps.dataDir, message);
  if (!outcome.ok) {
    throw new ApiError('provider_error', {
      message: outcome.message.slice(0, 1000) || 'The provider refused the test.',
      details: {
        reason: outcome.reason,
        stage: outcome.stage,
        ...details,
        ...(outcome.kind !== undefined ? { kind: outcome.kind } : {}),
      },
    });
  }
  const sent = outcome.sent;
  return {
    ok: true,
    latency_ms: outcome.latencyMs,
    ...(sent === undefined
      ? {}
      : {
          sent: {
            to: sent.to,
            response: sent.response,
            latency_ms: sent.latencyMs,
            ...(sent.providerMessageId !== undefined ? { provider_message_id: sent.providerMessageId } : {}),
          },
        }),
  };
}
