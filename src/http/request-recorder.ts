import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../domain/clock.js';
import { newSortableId } from '../domain/ids.js';
import type { RequestLogRow } from '../storage/request-log.js';
import type { Store } from '../storage/store.js';

/**
 * The request log's writer (issue 29). A refused request is never slowed or failed by its log
 * row: `record` only pushes onto a bounded buffer, and the rows are written in batches
 * (BATCH_ROWS, or every FLUSH_EVERY_MS), one background transaction each. What is dropped:
 * - over PER_ORG_PER_MINUTE rows of one organization in a clock minute (a 429 flood would
 *   otherwise write a row per refused request for as long as it lasts): counted, and one summary
 *   row per organization and minute says how many, of which statuses (code `request_log_capped`);
 * - past MAX_BUFFERED rows waiting (the database slower than the refusals): counted;
 * - a batch the database refused (down, disk full): logged once per spell, counted, not retried.
 * Counted in `mailroom_request_log_dropped_total{reason="org_cap"|"buffer_full"|"storage"}`.
 */

/** 60 a minute per organization: a client retrying once a second is logged whole, a flood by its summary. */
export const PER_ORG_PER_MINUTE = 60;
/** ~25 MB at most of rows waiting (≤ 2.5 KB each): ten seconds of 1,000 refusals a second. */
export const MAX_BUFFERED = 10_000;
export const BATCH_ROWS = 200;
export const FLUSH_EVERY_MS = 1_000;
export const CAPPED_CODE = 'request_log_capped';
const MINUTE_MS = 60_000;

export type RefusedRequest = Omit<RequestLogRow, 'id' | 'created_at'>;

interface Logger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** One organization's current minute. */
interface Window {
  minute: number;
  kept: number;
  dropped: number;
  statuses: Record<string, number>;
  last?: RefusedRequest;
  lastAt: number;
}

type DropReason = 'org_cap' | 'buffer_full' | 'storage';

function droppedCounter(registry: Registry): Counter<'reason'> {
  const name = 'mailroom_request_log_dropped_total';
  const have = registry.getSingleMetric(name);
  if (have instanceof Counter) return have as Counter<'reason'>;
  return new Counter({
    name,
    help: 'Refused requests the request log did not keep: over the per-organization cap, buffer full, or the write failed',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
}

export class RequestRecorder {
  private buffer: RequestLogRow[] = [];
  private readonly windows = new Map<string, Window>();
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly dropped: Counter<'reason'>;
  /** Whether the current spell of write failures (or of a full buffer) was logged. */
  private told = { storage: false, buffer: false };

  constructor(
    private readonly deps: { store: Store; clock: Clock; logger: Logger; registry: Registry },
    private readonly perOrgPerMinute = PER_ORG_PER_MINUTE,
  ) {
    this.dropped = droppedCounter(deps.registry);
  }

  /** Starts the flush timer (unref'd: it keeps no process alive). */
  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.tick(), FLUSH_EVERY_MS);
    this.timer.unref();
  }

  /** Takes a refused request; never throws, never waits. */
  record(entry: RefusedRequest): void {
    const now = this.deps.clock.now();
    const minute = Math.floor(now / MINUTE_MS);
    let w = this.windows.get(entry.org_id);
    if (w !== undefined && w.minute !== minute) {
      this.summarise(entry.org_id, w);
      w = undefined;
    }
    if (w === undefined) {
      w = { minute, kept: 0, dropped: 0, statuses: {}, lastAt: now };
      this.windows.set(entry.org_id, w);
    }
    if (w.kept >= this.perOrgPerMinute) {
      w.dropped++;
      w.statuses[String(entry.status)] = (w.statuses[String(entry.status)] ?? 0) + 1;
      w.last = entry;
      w.lastAt = now;
      this.drop('org_cap', 1);
      return;
    }
    w.kept++;
    this.push({ ...entry, id: newSortableId('rql', now), created_at: now });
  }

  /** Writes what waits (summaries of ended minutes first); resolves when written or dropped, never rejects. */
  flush(): Promise<void> {
    this.flushing ??= this.drain().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  /** At shutdown: every pending summary, then the buffer, written before the store closes. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const [org, w] of this.windows) this.summarise(org, w);
    this.windows.clear();
    await this.flushing;
    await this.flush();
  }

  private async tick(): Promise<void> {
    const minute = Math.floor(this.deps.clock.now() / MINUTE_MS);
    for (const [org, w] of this.windows) {
      if (w.minute === minute) continue;
      this.summarise(org, w);
      this.windows.delete(org);
    }
    await this.flush();
  }

  private push(row: RequestLogRow): void {
    if (this.buffer.length >= MAX_BUFFERED) {
      this.drop('buffer_full', 1);
      if (!this.told.buffer) {
        this.told.buffer = true;
        this.deps.logger.warn({ component: 'request-log', waiting: MAX_BUFFERED }, 'request log buffer full: rows dropped');
      }
      return;
    }
    this.buffer.push(row);
    if (this.buffer.length >= BATCH_ROWS) void this.flush();
  }

  /** One row for a minute's dropped requests: how many, of which statuses, the last one's route and key. */
  private summarise(org: string, w: Window): void {
    if (w.dropped === 0 || w.last === undefined) return;
    const top = Object.entries(w.statuses).sort((a, b) => b[1] - a[1])[0]?.[0] ?? String(w.last.status);
    const from = w.minute * MINUTE_MS;
    this.push({
      id: newSortableId('rql', w.lastAt),
      created_at: w.lastAt,
      org_id: org,
      key_id: w.last.key_id,
      method: w.last.method,
      route: w.last.route,
      status: Number(top),
      code: CAPPED_CODE,
      message:
        `${w.dropped} more refused request${w.dropped === 1 ? ' was' : 's were'} not logged in this minute ` +
        `(the log keeps ${this.perOrgPerMinute} a minute per organization).`,
      fields: JSON.stringify({
        not_logged: w.dropped,
        statuses: w.statuses,
        from: new Date(from).toISOString(),
        until: new Date(from + MINUTE_MS).toISOString(),
      }),
      ip: w.last.ip,
    });
    w.dropped = 0;
    w.statuses = {};
  }

  private async drain(): Promise<void> {
    while (this.buffer.length > 0) {
      const batch = this.buffer.splice(0, BATCH_ROWS);
      try {
        await this.deps.store.transaction((tx) => tx.requestLog.insertMany(batch), { background: true });
        if (this.told.storage) this.deps.logger.info({ component: 'request-log' }, 'request log writes again');
        this.told = { storage: false, buffer: false };
      } catch (err) {
        this.drop('storage', batch.length);
        if (!this.told.storage) {
          this.told.storage = true;
          this.deps.logger.warn(
            { component: 'request-log', err: err instanceof Error ? err.message : String(err), rows: batch.length },
            'request log write failed: rows dropped',
          );
        }
        // The rest waits for the next tick: a database that is down is not asked again at once.
        return;
      }
    }
  }

  private drop(reason: DropReason, n: number): void {
    this.dropped.inc({ reason }, n);
  }
}
