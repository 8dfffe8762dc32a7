import fs from 'node:fs';
import pg from 'pg';

/**
 * CPU time of the PostgreSQL backends serving one application_name, read from /proc (the
 * server must be local and readable: on another host the figure is absent). On a shared 2-core
 * machine a run's wall time mostly measures the neighbours; the CPU the database spent per job
 * is the steadier figure, and with this process's own CPU it is the whole cost of a job.
 */
export type CpuSnapshot = Map<number, number> | undefined;

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS = 100;

export async function backendCpu(url: string, applicationName: string): Promise<CpuSnapshot> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const pids = await client.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [
      applicationName,
    ]);
    const out = new Map<number, number>();
    for (const { pid } of pids.rows) {
      try {
        // Fields after the command name (which may hold spaces): state is the 3rd, utime the 14th, stime the 15th.
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        out.set(pid, (Number(fields[11]) + Number(fields[12])) * (1000 / TICKS));
      } catch {
        return undefined;
      }
    }
    return out;
  } finally {
    await client.end();
  }
}

/** Milliseconds of backend CPU between two snapshots (a backend started since counts from 0). */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): number | undefined {
  if (before === undefined || after === undefined) return undefined;
  let ms = 0;
  for (const [pid, t] of after) ms += t - (before.get(pid) ?? 0);
  return ms;
}
