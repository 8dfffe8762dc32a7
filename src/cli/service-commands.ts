import { runServiceTest } from '../admin/service-test.js';
import type { Config } from '../config/env.js';
import { ApiError } from '../errors/api-error.js';
import type { Store } from '../storage/store.js';
import { usageOf } from './help.js';

/** `mailroom services …`: what the admin API's service routes do, from the command line. */

type Out = (line: string) => void;

/** Exit status of a service test the provider failed (0 passed, 1 usage, 2 unknown organization or service). */
export const TEST_FAILED = 3;

export async function runServices(
  store: Store,
  config: Config,
  args: string[],
  options: { to?: string | undefined },
  out: Out,
  err: Out,
): Promise<number> {
  const [action, org, id, extra] = args;
  if (action !== 'test' || org === undefined || id === undefined || extra !== undefined || options.to === '') {
    err(usageOf('services'));
    return 1;
  }
  const messageIdHost = new URL(config.baseUrl).hostname || 'mailroom.local';
  try {
    const result = await runServiceTest({ store, dataDir: config.dataDir, messageIdHost }, org, id, options.to);
    out(`ok: service ${org}/${id} accepted the credentials in ${result.latency_ms} ms`);
    if (result.sent !== undefined) {
      out(`sent a test message to ${result.sent.to} in ${result.sent.latency_ms} ms`);
      out(`  response:            ${result.sent.response}`);
      if (result.sent.provider_message_id !== undefined) out(`  provider message id: ${result.sent.provider_message_id}`);
    }
    return 0;
  } catch (e) {
    if (!(e instanceof ApiError) || e.code !== 'provider_error') throw e;
    const reason = typeof e.details?.reason === 'string' ? e.details.reason : 'other';
    const stage = typeof e.details?.stage === 'string' ? e.details.stage : 'verify';
    err(`failed (${reason}, at ${stage}): ${e.message}`);
    return TEST_FAILED;
  }
}
