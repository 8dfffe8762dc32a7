import type { RequestLogRow } from '../src/storage/request-log.js';
import type { Store } from '../src/storage/store.js';

const DAY = 86_400_000;

/**
 * What refused requests look like (issue 29): a busy organization's three days, floods of 429
 * and keys gone stale dominating, the rows an operator hunts for (422, 451) a small share.
 */
const MIX: ReadonlyArray<readonly [status: number, code: string, route: string, share: number]> = [
  [429, 'rate_limited', '/api/v1.0/email/send', 0.45],
  [401, 'invalid_public_key', '/api/v1.0/email/send', 0.15],
  [403, 'origin_not_allowed', '/api/v1.0/email/send', 0.12],
  [404, 'template_not_found', '/v1/send', 0.1],
  [400, 'invalid_body', '/v1/send', 0.08],
  [422, 'invalid_template_params', '/v1/send', 0.07],
  [451, 'recipient_suppressed', '/v1/send', 0.02],
  [402, 'insufficient_credits', '/v1/send-batch', 0.01],
];

export const SEED_KEYS = ['key_bench_public', 'key_bench_private', 'key_bench_old'] as const;

function pick(r: number): (typeof MIX)[number] {
  let acc = 0;
  for (const m of MIX) {
    acc += m[3];
    if (r < acc) return m;
  }
  return MIX[0] as (typeof MIX)[number];
}

/**
 * `count` rows of `orgId` over the last three days (the default retention), written through the
 * store in batches of 500 (one statement each, as the recorder writes its batches), ids sortable
 * by time as the recorder makes them. A fixed generator: every run the same data.
 */
export async function seedRequestLog(store: Store, orgId: string, count: number, now = Date.now()): Promise<number> {
  const started = performance.now();
  let seed = 7;
  const rand = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const BATCH = 500;
  for (let done = 0; done < count; done += BATCH) {
    const rows: RequestLogRow[] = [];
    for (let i = done; i < Math.min(count, done + BATCH); i++) {
      // Evenly over three days, oldest first, as they arrive.
      const created = now - 3 * DAY + Math.floor((i / count) * 3 * DAY);
      const [status, code, route] = pick(rand());
      const key = SEED_KEYS[Math.floor(rand() * SEED_KEYS.length)] ?? null;
      rows.push({
        id: `rql_${created.toString(16).padStart(12, '0')}${i.toString(36).padStart(8, '0')}`,
        org_id: orgId,
        created_at: created,
        key_id: key,
        method: 'POST',
        route,
        status,
        code,
        message: `Refused as ${code}.`,
        fields: JSON.stringify({
          template_id: 'contact',
          service_id: 'relay',
          template_params: { name: 'string(3)', email: 'string(17)', message: 'string(120)' },
          origin: 'https://shop.acme.test',
          user_agent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
        }),
        ip: `198.51.100.${Math.floor(rand() * 250)}`,
      });
    }
    await store.requestLog.insertMany(rows);
  }
  return (performance.now() - started) / 1000;
}
