import { percentOf, type AlertEvent, type AlertKind, type AlertSettings, type RateMeasure } from '../domain/alerts.js';
import { messageRates } from '../domain/rates.js';
import type { Store } from '../storage/store.js';

const HOUR_MS = 3_600_000;

/** What a rate alert should be now: over (fire), under (resolve), or not measurable (leave it as it is). */
export type RateVerdict = { kind: 'over' | 'under'; measure: RateMeasure } | { kind: 'off' };

/**
 * The rule, pure: over at `threshold` % or more of a sample of at least `min_sample` messages (sent
 * for the bounce rate, delivered for the complaint rate);
 * under below the threshold, whatever the sample (a firing alert resolves once the rate is back
 * under, even when few messages went since); a threshold of null is off (a firing alert resolves).
 * Compared as count × 100 ≥ threshold × sample, so 1 of 1,000 is 0.1 % exactly.
 */
export function rateVerdict(count: number, sample: number, threshold: number | null, s: AlertSettings): RateVerdict {
  if (threshold === null) return { kind: 'off' };
  const measure: RateMeasure = {
    percent: percentOf(count, sample),
    threshold_percent: threshold,
    count,
    sample,
    window_hours: s.window_hours,
  };
  if (sample > 0 && count * 100 >= threshold * sample - 1e-9) {
    return sample >= s.min_sample ? { kind: 'over', measure } : { kind: 'off' };
  }
  return { kind: 'under', measure };
}

/**
 * The periodic check, run by every worker's housekeeping (a minute apart): for each organization,
 * the bounce and complaint rates over its window fire or resolve their alerts; and firing
 * `endpoint_disabled` alerts whose endpoint is enabled again (or deleted) resolve. Several
 * workers may run it at once: `fire`/`resolve` are compare-and-sets, so each crossing is sent once.
 * Returns the events written (tests).
 */
export async function checkAlerts(store: Store, now: number): Promise<AlertEvent[]> {
  const written: AlertEvent[] = [];
  const note = (e: AlertEvent | undefined) => {
    if (e !== undefined) written.push(e);
  };
  for (const { org_id, settings } of await store.alerts.everyOrganization()) {
    // The overview's arithmetic (src/domain/rates.ts): bounced of sent, complained of delivered.
    const r = messageRates(await store.alerts.windowCounts(org_id, now - settings.window_hours * HOUR_MS));
    const rates: Array<[AlertKind, number, number, number | null]> = [
      ['bounce_rate', r.bounced, r.sent, settings.bounce_rate_percent],
      ['complaint_rate', r.complained, r.delivered, settings.complaint_rate_percent],
    ];
    // Read first, so a quiet organization costs two reads a minute and no write transaction.
    const firing = new Set((await store.alerts.open(org_id)).map((a) => a.kind));
    for (const [kind, count, sample, threshold] of rates) {
      const v = rateVerdict(count, sample, threshold, settings);
      if (v.kind === 'over' && !firing.has(kind)) {
        note(await store.transaction((tx) => tx.alerts.fire(org_id, kind, '', { rate: v.measure }, now), { durable: false }));
      } else if ((v.kind === 'under' || threshold === null) && firing.has(kind)) {
        const detail = v.kind === 'under' ? { rate: v.measure } : { reason: 'alert turned off' };
        note(await store.transaction((tx) => tx.alerts.resolve(org_id, kind, '', detail, now), { durable: false }));
      }
    }
  }
  for (const a of await store.alerts.firingOfKind('endpoint_disabled')) {
    const endpoint = await store.webhookEndpoints.get(a.org_id, a.subject);
    if (endpoint !== undefined && !endpoint.enabled) continue;
    const reason = endpoint === undefined ? 'endpoint deleted' : 'endpoint enabled again';
    note(
      await store.transaction(
        (tx) => tx.alerts.resolve(a.org_id, 'endpoint_disabled', a.subject, { endpoint_id: a.subject, reason }, now),
        {
          durable: false,
        },
      ),
    );
  }
  return written;
}
