import type { ProviderDescriptor } from './descriptor.js';

/** `.eml` files under `<data_dir>/outbox/`: no settings, no events. */
export const outbox = { name: 'outbox', title: 'Outbox', kind: 'local' } as const satisfies ProviderDescriptor;
