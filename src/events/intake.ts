import type { Service } from '../domain/types.js';
import { ApiError } from '../errors/api-error.js';
import type { SourceRegistry } from './sources/index.js';
import {
  IntakeMalformed,
  IntakeRejected,
  WEBHOOK_SOURCES,
  type IntakeRequest,
  type ProviderEvent,
  type RecordOutcome,
  type WebhookIntake,
  type WebhookSource,
  type WebhookSourceHandler,
} from './types.js';

/**
 * The provider event intake (POST /v1/provider-events/:token), as a plain function over its
 * dependencies: find the service by its events URL token, verify and parse with the service's
 * source, record, and only then answer. Nothing is recorded unless verification passed, and
 * the 2xx is sent only after the events are stored (the record step commits before it returns).
 */

export interface IntakeDeps {
  findService(token: string): Promise<Service | undefined>;
  sources: SourceRegistry;
  /** Matches, deduplicates and stores the events durably, counting each outcome (recordProviderEvents). */
  record(service: Service, events: ProviderEvent[]): Promise<RecordOutcome[]>;
  /** Counts what the record step never sees: requests refused by verification. */
  countRejected(source: WebhookSource): void;
  warn(detail: Record<string, unknown>, message: string): void;
  now(): number;
}

export interface IntakeSummary {
  received: number;
  recorded: number;
  duplicates: number;
  unmatched: number;
}

/**
 * One answer for an unknown token and for a service without (usable) events settings: the
 * caller learns nothing about which part failed, nor whether the service exists.
 */
const unknownUrl = () => new ApiError('not_found', { message: 'No provider events endpoint at this URL.' });

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isWebhookSource = (v: unknown): v is WebhookSource =>
  typeof v === 'string' && (WEBHOOK_SOURCES as readonly string[]).includes(v);

/** The service's `events` settings and its source's handler, or undefined when it has none usable. */
export function eventsSetup(
  service: Service,
  sources: SourceRegistry,
): { settings: Record<string, unknown>; handler: WebhookSourceHandler } | undefined {
  const settings = service.settings.events;
  if (!isRecord(settings) || !isWebhookSource(settings.source)) return undefined;
  const handler = sources[settings.source];
  return handler === undefined ? undefined : { settings, handler };
}

export async function receiveProviderEvents(deps: IntakeDeps, token: string, request: IntakeRequest): Promise<IntakeSummary> {
  const service = await deps.findService(token);
  const setup = service === undefined ? undefined : eventsSetup(service, deps.sources);
  if (service === undefined || setup === undefined) throw unknownUrl();
  const { handler, settings } = setup;
  let intake: WebhookIntake;
  try {
    intake = await handler.verifyAndParse(request, settings, deps.now());
  } catch (err) {
    if (err instanceof IntakeRejected) {
      deps.countRejected(handler.source);
      // Why, for the operator; the caller is told only that verification failed.
      deps.warn(
        { source: handler.source, org: service.org_id, service: service.id, why: err.message },
        'provider event refused: verification failed',
      );
      throw new ApiError('unauthorized', { message: 'The request failed the provider signature or credential check.' });
    }
    if (err instanceof ApiError && err.code === 'service_unavailable') {
      // A source's own dependency failed (SNS: the signing certificate could not be fetched):
      // the provider retries on the 503, but an operator should know events are waiting.
      deps.warn(
        { source: handler.source, org: service.org_id, service: service.id, why: err.message },
        'provider event not verified yet: a dependency of the check failed',
      );
      throw err;
    }
    if (err instanceof IntakeMalformed) {
      throw new ApiError('invalid_body', {
        message: `The provider event could not be read: ${err.message}`,
        details: { fields: [{ field: 'body', message: err.message }] },
      });
    }
    throw err;
  }
  // The record step counts its outcomes and logs unmatched events at warn (src/events/record.ts).
  const outcomes = intake.events.length === 0 ? [] : await deps.record(service, intake.events);
  const summary: IntakeSummary = {
    received: intake.events.length,
    recorded: outcomes.filter((o) => o === 'recorded').length,
    duplicates: outcomes.filter((o) => o === 'duplicate').length,
    unmatched: outcomes.filter((o) => o === 'unmatched').length,
  };
  // After the events are stored: a failed follow-up (an SNS confirmation) loses no event.
  if (intake.followUp !== undefined) await intake.followUp();
  return summary;
}
