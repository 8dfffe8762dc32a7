import { createRequire } from 'node:module';
import type { Agent as UndiciAgent, Dispatcher } from 'undici';

/**
 * undici's Agent and request, loaded without undici's index. The index installs its own Agent as
 * the process's global dispatcher when none is set yet (lib/global.js), and Node 20's built-in
 * fetch then runs its requests through undici 7's dispatcher: a mismatch that refused a plain
 * `fetch(url, { headers: { 'content-length': '8' } })` ("invalid content-length header",
 * test/attachments/send.test.ts). Loading the two modules we use leaves the global alone.
 * undici has no exports map, so these paths are part of what the pinned 7.30.2 ships.
 */
const require = createRequire(import.meta.url);

export const Agent = require('undici/lib/dispatcher/agent.js') as typeof UndiciAgent;
export type Agent = UndiciAgent;

const requestApi = require('undici/lib/api/api-request.js') as (
  this: Dispatcher,
  options: Dispatcher.RequestOptions,
) => Promise<Dispatcher.ResponseData>;

/** `dispatcher.request(options)` (undici attaches it to Dispatcher.prototype in its index). */
export function request(dispatcher: Dispatcher, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData> {
  return requestApi.call(dispatcher, options);
}
