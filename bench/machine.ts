import os from 'node:os';

/** The header line of `npm run bench`: what machine the figures come from, and how busy it was. */
export function machineLine(): string {
  const cpus = os.cpus();
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  return [
    `machine: ${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown CPU'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} ` +
      `GiB memory, Node ${process.version}, ${os.type()} ${os.release()}`,
    `load average at start ${load}: other processes may be running; compare ratios (measured in the same run), not rates`,
  ].join('\n');
}
