/**
 * Outbound webhook endpoints (src/admin/routes/webhooks.ts) and their delivery log
 * (webhook-deliveries.ts). The signing secret comes back only from create and rotate. Shapes generated (./shapes.ts).
 */
import { api, orgPath } from './client';
import { allOf, type Answer, type Query, type RequestBody } from './shapes.js';

type Endpoints = '/organizations/{org}/webhooks';
type Endpoint = '/organizations/{org}/webhooks/{id}';
type Deliveries = '/organizations/{org}/webhooks/{id}/deliveries';

export type WebhookEndpoint = Answer<Endpoint, 'get'>;
/** What adding an endpoint sends; `events: ["*"]` (or none) is every event type. */
export type WebhookSettings = RequestBody<Endpoints, 'post'>;
export type WebhookEventType = Exclude<NonNullable<WebhookSettings['events']>[number], '*'>;
export type WebhookDelivery = Answer<Deliveries, 'get'>['items'][number];
export type TestResult = Answer<'/organizations/{org}/webhooks/{id}/test', 'post'>;
type Queued = Answer<'/organizations/{org}/webhooks/{id}/replay', 'post'>;

/** The log's filters as the page reads them from the hash: strings, which the server checks. */
export type DeliveryQuery = { [K in keyof Query<Deliveries, 'get'>]?: string };

/** The message and alert event types an endpoint can subscribe to (src/webhooks/types.ts), and the test event, as shown. */
export const WEBHOOK_EVENT_TYPES = allOf<WebhookEventType>()([
  'message.queued',
  'message.held',
  'message.released',
  'message.sending',
  'message.sent',
  'message.deferred',
  'message.delivered',
  'message.bounced',
  'message.complained',
  'message.failed',
  'message.discarded',
  'message.held_service_error',
  'alert.bounce_rate',
  'alert.complaint_rate',
  'alert.breaker_open',
  'alert.endpoint_disabled',
  'webhook.test',
]);

export const DELIVERY_STATES = allOf<WebhookDelivery['state']>()(['pending', 'succeeded', 'failed']);

/** Whether a stored subscription names an event type this list shows (the server stores only those and `*`). */
export const isWebhookEventType = (t: string): t is WebhookEventType => (WEBHOOK_EVENT_TYPES as readonly string[]).includes(t);

const base = (org: string, ...rest: string[]) => orgPath(org, 'webhooks', ...rest);

export const listWebhooks = (org: string) => api.get<Answer<Endpoints, 'get'>>(base(org));
export const getWebhook = (org: string, id: string) => api.get<WebhookEndpoint>(base(org, id));
export const createWebhook = (org: string, body: WebhookSettings) => api.post<Answer<Endpoints, 'post'>>(base(org), body);
export const patchWebhook = (org: string, id: string, body: RequestBody<Endpoint, 'patch'>) =>
  api.patch<WebhookEndpoint>(base(org, id), body);
export const deleteWebhook = (org: string, id: string) => api.delete(base(org, id));
export const setWebhookEnabled = (org: string, id: string, enabled: boolean) =>
  api.post<WebhookEndpoint>(base(org, id, enabled ? 'enable' : 'disable'));
export const rotateWebhookSecret = (org: string, id: string) =>
  api.post<Answer<'/organizations/{org}/webhooks/{id}/rotate-secret', 'post'>>(base(org, id, 'rotate-secret'));
export const testWebhook = (org: string, id: string) => api.post<TestResult>(base(org, id, 'test'));
export const listDeliveries = (org: string, id: string, q: DeliveryQuery) =>
  api.get<Answer<Deliveries, 'get'>>(base(org, id, 'deliveries'), { ...q });
/** One delivery of an endpoint with its attempts (404 when it is another endpoint's). */
export const getDelivery = (org: string, id: string, deliveryId: string) =>
  api.get<WebhookDelivery>(base(org, id, 'deliveries', deliveryId));
export const replayDelivery = (org: string, id: string, deliveryId: string) =>
  api.post<Queued>(base(org, id, 'deliveries', deliveryId, 'replay'));
export const replayRange = (org: string, id: string, body: RequestBody<'/organizations/{org}/webhooks/{id}/replay', 'post'>) =>
  api.post<Queued>(base(org, id, 'replay'), body);
