import { requirePrivateKey } from '../../domain/caller.js';
import type { App, AppServices } from '../app-types.js';
import { authenticateToRead } from '../auth.js';
import { headerValue } from '../headers.js';
import { HistoryPage, historyPage, HistoryQuery, tidyBoundErrors } from '../history-query.js';
import { PRIVATE_KEY_ERRORS, responses } from '../schemas.js';

/**
 * GET /v1/history: private key, newest first, keyset pagination on (created_at, id); live or
 * test messages, never both (a test key: test only, D1). The query,
 * its checks and the page live in history-query.ts, shared with the admin API's message list.
 */
export function registerHistory(app: App, { store, clock, config }: AppServices): void {
  app.get(
    '/v1/history',
    {
      schema: {
        tags: ['messages'],
        summary: 'Message history, newest first',
        security: [{ privateKey: [] }],
        querystring: HistoryQuery,
        response: responses({ 200: HistoryPage }, ['invalid_body', ...PRIVATE_KEY_ERRORS, 'forbidden', 'rate_limited']),
      },
      // Validation failures reach the handler, which tidies those of from/to and throws.
      attachValidation: true,
    },
    async (request) => {
      if (request.validationError !== undefined) throw tidyBoundErrors(request.validationError);
      const caller = await authenticateToRead(request, store);
      requirePrivateKey(caller, headerValue(request, 'origin'));
      return historyPage({ store, clock, config }, caller.org.id, request.query, caller.key.mode);
    },
  );
}
