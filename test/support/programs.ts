import { spawnSync } from 'node:child_process';

/**
 * Whether a program is on PATH, for a test that runs it (Caddy, systemd-analyze). `installedByCi`
 * ones (.ci/run installs them) are a failure when missing under CI (CI=true), never a skip; the
 * others are skipped with a visible notice naming `what` is skipped.
 */
export function programInstalled(program: string, installedByCi: boolean, what: string): boolean {
  const found = spawnSync('sh', ['-c', `command -v ${program}`]).status === 0;
  if (!found && installedByCi && process.env.CI === 'true')
    throw new Error(`${program} is required under CI (.ci/run installs it)`);
  if (!found) console.warn(`\n*** ${program} is not installed: ${what} is SKIPPED ***\n`);
  return found;
}
