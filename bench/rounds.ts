import type { ChildProcess } from 'node:child_process';
/** The middle value (the lower middle of an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? 0;
}

export interface RoundFigures {
  /** Median messages per second of each path, and the median of each round's ratio. */
  raw: number;
  queued: number;
  ratio: number;
  ratios: number[];
}

/**
 * How the delivery lines compare a path through mailroom's queue with the raw client: warm both
 * (JIT, pooled sockets), call `afterWarm` (the callers reset their CPU and byte samples), then
 * alternate raw and queued runs for `rounds` rounds. A pause before each run lets the previous
 * one's background work (the WAL checkpoint of the queue's writes, the receiver's backlog) finish
 * instead of landing on the other path; alternating spreads a busy machine's noise over both.
 */
export async function alternateRounds(
  rawRun: (count: number) => Promise<number>,
  queueRun: (count: number) => Promise<number>,
  messages: number,
  rounds: number,
  afterWarm: () => void,
): Promise<RoundFigures> {
  const warm = Math.min(500, messages);
  await rawRun(warm);
  await queueRun(warm);
  afterWarm();
  const raws: number[] = [];
  const queueds: number[] = [];
  const ratios: number[] = [];
  const settle = () => new Promise((r) => setTimeout(r, 1000));
  for (let r = 0; r < rounds; r++) {
    await settle();
    const raw = await rawRun(messages);
    await settle();
    const queued = await queueRun(messages);
    raws.push(raw);
    queueds.push(queued);
    ratios.push(queued / raw);
  }
  return { raw: median(raws), queued: median(queueds), ratio: median(ratios), ratios };
}

/**
 * Asks a bench helper process (a sink or a fake, forked so its CPU is not the sender's) over
 * IPC: sends `message` (none when empty) and resolves with the first answer `pick` accepts.
 */
export function askChild(child: ChildProcess) {
  return <T>(message: string, pick: (m: Record<string, number>) => T | undefined): Promise<T> =>
    new Promise((resolve) => {
      const onMessage = (m: Record<string, number>) => {
        const value = pick(m);
        if (value !== undefined) {
          child.off('message', onMessage);
          resolve(value);
        }
      };
      child.on('message', onMessage);
      if (message !== '') child.send(message);
    });
}
