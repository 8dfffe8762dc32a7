import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { retryingStore } from '../../src/delivery/storage-retry.js';
import { databaseOf } from '../support/db.js';
import { seedOrg } from '../support/seed.js';
import { freshStore, type TestStore } from '../support/stores.js';
import { insertQueued } from '../support/delivery.js';
import { waitFor } from '../support/smtp-sink.js';

/**
 * The worker's outcome writes (src/delivery/storage-retry.ts) on a real SQLite file held at its
 * size (max_page_count): SQLITE_FULL, as a full disk gives it.
 */
/** The retry's waits, held until the test ends them: `asked` lists the milliseconds asked for. */
function heldSleeps() {
  const asked: number[] = [];
  const pending: Array<() => void> = [];
  return {
    asked,
    sleep: (ms: number) =>
      new Promise<void>((resolve) => {
        asked.push(ms);
        pending.push(resolve);
      }),
    end: () => {
      for (const wake of pending.splice(0)) wake();
    },
  };
}

describe('writes retried while the storage is full (SQLite)', () => {
  let t: TestStore | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  const fill = async (store: TestStore): Promise<{ lift: () => Promise<void> }> => {
    const db = databaseOf(store.store);
    const pages = Number((await sql<{ page_count: number }>`pragma page_count`.execute(db)).rows[0]?.page_count);
    await sql.raw(`pragma max_page_count = ${pages}`).execute(db);
    return {
      lift: async () => {
        await sql.raw(`pragma max_page_count = ${pages * 1000}`).execute(db);
      },
    };
  };

  it('a write the full storage refuses lands as soon as there is room again', async () => {
    t = await freshStore('sqlite');
    await seedOrg(t.store);
    const full = await fill(t);
    await expect(insertQueued(t.store, 50, t.clock.now())).rejects.toMatchObject({ code: 'SQLITE_FULL' });
    const waits = heldSleeps();
    const retrying = retryingStore(t.store, 60_000, waits.sleep);
    let landed = false;
    const write = insertQueued(retrying.store, 50, t.clock.now()).then((ids) => {
      landed = true;
      return ids;
    });
    // Refused, waited, tried again and refused again: the second wait is asked for.
    await waitFor(() => waits.asked.length === 1, 5_000, 'the first wait');
    waits.end();
    await waitFor(() => waits.asked.length === 2, 5_000, 'the second wait');
    expect(waits.asked).toEqual([250, 500]);
    expect(landed).toBe(false);
    await full.lift();
    waits.end();
    expect(await write).toHaveLength(50);
    expect(t.store.health.current()).toBeUndefined();
  });

  it("a stop ends the waiting with the storage's own error; other errors are not retried", async () => {
    t = await freshStore('sqlite');
    await seedOrg(t.store);
    await fill(t);
    const waits = heldSleeps();
    const retrying = retryingStore(t.store, 60_000, waits.sleep);
    const write = insertQueued(retrying.store, 50, t.clock.now());
    await waitFor(() => waits.asked.length === 1, 5_000, 'the write to wait after its refusal');
    retrying.stop();
    await expect(write).rejects.toMatchObject({ code: 'SQLITE_FULL' });
    let tries = 0;
    await expect(
      retryingStore(t.store, 60_000).store.transaction(async () => {
        tries += 1;
        throw new Error('not storage trouble');
      }),
    ).rejects.toThrow('not storage trouble');
    expect(tries).toBe(1);
  });
});
