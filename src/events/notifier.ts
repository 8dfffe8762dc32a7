import type { EventNotifier } from './types.js';

/**
 * The notifier a process has until outbound webhooks exist (their own issue): it takes every
 * recorded event and sends nothing. The seam is wired end to end (buildServices → the provider
 * events route and the inbound listener → recordProviderEvents), so the webhooks issue replaces
 * this one object; tests pass a recording one.
 */
export const noNotifier: EventNotifier = { notify: () => undefined };
