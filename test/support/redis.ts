import { Redis } from 'ioredis';

export const REDIS_URL = process.env.MAILROOM_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
let redisReachable: Promise<boolean> | undefined;

/** Whether Redis answers (asked once per test file); under CI its absence is a failure, elsewhere its tests are skipped. */
export function redisAvailable(): Promise<boolean> {
  redisReachable ??= (async () => {
    const client = new Redis(REDIS_URL, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      retryStrategy: () => null,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.ping();
      return true;
    } catch (err) {
      if (process.env.CI === 'true') throw new Error(`Redis is required under CI: ${String(err)}`);
      console.warn(`\n*** Redis unreachable at ${REDIS_URL}: the tests that need it are SKIPPED ***\n`);
      return false;
    } finally {
      client.disconnect();
    }
  })();
  return redisReachable;
}
