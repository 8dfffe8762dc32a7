import fs from 'node:fs';

/**
 * What the benchmark reads about another process from /proc (Linux): its resident memory and
 * the CPU time of all its threads. The CPU figure is the steadier one on a shared machine:
 * throughput falls when another helper takes a core, CPU time per request hardly moves.
 */

/** VmRSS of `pid` in MB, or NaN when the process is gone. */
export function rssMb(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] === undefined ? Number.NaN : Number(match[1]) / 1024;
  } catch {
    return Number.NaN;
  }
}

/** The kernel's clock ticks (USER_HZ): 100 on every Linux this runs on. */
const TICKS_PER_SECOND = 100;

/** User + system CPU seconds `pid` has used so far, every thread counted (10 ms resolution). */
export function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces; fields 14 and 15 follow its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Samples VmRSS every `everyMs` (default 100) until `stop`, which returns the peak in MB. */
export function sampleRss(pid: number, everyMs = 100): { stop: () => number } {
  let peak = rssMb(pid);
  const timer = setInterval(() => {
    const now = rssMb(pid);
    if (now > peak) peak = now;
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, rssMb(pid));
    },
  };
}
