import { Type, type Static } from '@sinclair/typebox';
import { cancelMessage, releaseMessage } from '../../credits/holds.js';
import type { MessageStatus } from '../../domain/types.js';
import { isApiError } from '../../errors/api-error.js';
import type { App, AppServices } from '../../http/app-types.js';
import { responses } from '../../http/schemas.js';
import type { Store } from '../../storage/store.js';
import { ADMIN_BODY_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, invalidFields, OrgParams, requireOrganization } from './common.js';

/**
 * One request acts on at most this many messages: each id is its own transaction (the single
 * route's), ~1-3 ms apiece on either database, so 100 answer well inside a browser's patience.
 * More held messages are released by a top-up (oldest first) or by repeating the request.
 */
export const BULK_MAX = 100;

const BulkInput = Type.Object(
  {
    message_ids: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        minItems: 1,
        maxItems: BULK_MAX,
        description: `1 to ${BULK_MAX} message ids; a repeated id is acted on once`,
      }),
    ),
    filter: Type.Optional(
      Type.Object(
        { status: Type.Literal('held', { description: 'Every held message (no credit to send it)' }) },
        {
          additionalProperties: false,
          description: `Instead of message_ids: the ${BULK_MAX} oldest messages in this status (repeat for more)`,
        },
      ),
    ),
  },
  { additionalProperties: false },
);

const BulkItem = Type.Object({
  message_id: Type.String(),
  ok: Type.Boolean({ description: 'Whether this message was released (or cancelled)' }),
  status: Type.Union([Type.String(), Type.Null()], {
    description: 'The status the message is in now; null when it was not found',
  }),
  error: Type.Union([Type.String(), Type.Null()], {
    description: 'The error code the single route would answer for this id: message_not_found, conflict, insufficient_credits',
  }),
  message: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed, in words; null when ok' }),
});

const BulkResult = Type.Object({
  results: Type.Array(BulkItem, { description: 'One per distinct id, in the order asked' }),
  succeeded: Type.Integer(),
  failed: Type.Integer(),
});
type BulkItem = Static<typeof BulkItem>;

type Action = (store: Store, orgId: string, messageId: string) => Promise<MessageStatus>;

/**
 * Each id goes through the single route's function (src/credits/holds.ts), one transaction
 * apiece, so a bulk action and a single one on the same message have one outcome between them:
 * the loser meets a status that is no longer held and gets that id's `conflict`. A failure is
 * that id's result, never the request's: partial success is the normal answer.
 */
export async function actOnEach(store: Store, orgId: string, ids: readonly string[], action: Action): Promise<BulkItem[]> {
  const results: BulkItem[] = [];
  for (const id of new Set(ids)) {
    try {
      results.push({ message_id: id, ok: true, status: await action(store, orgId, id), error: null, message: null });
    } catch (err) {
      if (!isApiError(err)) throw err;
      const current = err.code === 'message_not_found' ? undefined : (await store.messages.get(orgId, id))?.status;
      results.push({ message_id: id, ok: false, status: current ?? null, error: err.code, message: err.message });
    }
  }
  return results;
}

export function registerMessageBulkRoutes(app: App, { store }: AppServices): void {
  const actions: Array<[string, string, Action]> = [
    ['release', 'Release held messages now, one credit each; per-id results (partial success is normal)', releaseMessage],
    ['cancel', 'Cancel messages not yet sent (queued or held); per-id results (partial success is normal)', cancelMessage],
  ];
  for (const [name, summary, action] of actions) {
    app.post(
      `/organizations/:org/messages/${name}`,
      {
        schema: {
          tags: ADMIN_TAGS,
          security: ADMIN_SECURITY,
          summary,
          description:
            `Body: \`message_ids\` (1 to ${BULK_MAX}) or \`filter: {"status": "held"}\` (the ${BULK_MAX} oldest held). ` +
            'Each id is handled as the single route handles it and answers its own status or error code.',
          params: OrgParams,
          body: BulkInput,
          response: responses({ 200: BulkResult }, ADMIN_BODY_ERRORS),
        },
      },
      async (request) => {
        const org = await requireOrganization(store, request.params.org);
        const { message_ids: ids, filter } = request.body;
        if ((ids === undefined) === (filter === undefined)) {
          throw invalidFields([{ field: 'message_ids', message: 'or filter is required, not both' }]);
        }
        const chosen = ids ?? (await store.messages.oldestHeld(org.id, BULK_MAX));
        const results = await actOnEach(store, org.id, chosen, action);
        const succeeded = results.filter((r) => r.ok).length;
        return { results, succeeded, failed: results.length - succeeded };
      },
    );
  }
}
