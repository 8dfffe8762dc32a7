import { WEBHOOK_SOURCES, type WebhookSource } from '../providers/index.js';

/**
 * Every source an event after hand-off may come from: the providers' webhooks (src/providers/),
 * reports that arrive by mail (DSN, ARF), and the test-mode simulator (src/testmode/simulator-events.ts),
 * which is no provider: no service names it and it takes no webhook, but its events go through the
 * same record path. Here, below events/ and webhooks/, so both the record path and the webhook
 * payload's documentation take the one list.
 */
export const EVENT_SOURCES: readonly EventSource[] = [...WEBHOOK_SOURCES, 'dsn', 'arf', 'simulator'];
export type EventSource = WebhookSource | 'dsn' | 'arf' | 'simulator';
