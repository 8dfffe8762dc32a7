import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * Signature tokens a webhook source declares single-use (Mailgun's `signature.token`). A token
 * is claimed by inserting it: the primary key makes the second claim fail in any process, on
 * either dialect, without a read-then-write race. Rows outlive the signature's validity window
 * and are swept on the way.
 */
export function webhookTokensRepo(db: Kysely<Database>) {
  return {
    /** True the first time `token` is claimed for `source`, false for a replay. */
    async claim(source: string, token: string, expiresAt: number, now: number): Promise<boolean> {
      await db.deleteFrom('webhook_tokens').where('expires_at', '<', now).execute();
      const r = await db
        .insertInto('webhook_tokens')
        .values({ source, token, expires_at: expiresAt })
        .onConflict((oc) => oc.columns(['source', 'token']).doNothing())
        .executeTakeFirst();
      return (r.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
  };
}
