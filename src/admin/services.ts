import type { Repos } from '../storage/store.js';
import type { ServiceFields } from '../storage/services.js';

/**
 * Creates or replaces a service. A changed service may be a fixed one: messages held on its
 * error (bad credentials, TLS, configuration, or the service deleted and now created again)
 * go back to the queue to be tried again.
 */
export async function putService(
  tx: Repos,
  orgId: string,
  id: string,
  fields: ServiceFields,
  now: number,
): Promise<{ result: 'created' | 'updated'; requeued: number }> {
  const result = await tx.services.put(orgId, id, fields, now);
  const requeued = await tx.queue.requeueServiceErrors(orgId, id, now);
  return { result, requeued };
}
