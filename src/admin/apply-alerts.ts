import { isDeepStrictEqual } from 'node:util';
import { alertSettingsOf } from '../resources/alert-inputs.js';
import type { ConfigFile } from '../resources/inputs.js';
import type { Repos } from '../storage/store.js';

/**
 * An organization's `alerts:` of the config file (issue 29): the settings it names, defaults for
 * the fields it leaves out; left out whole, the stored settings (or the defaults) stay, as with
 * every section a file does not name. Equal settings are no change.
 */
export async function applyAlerts(
  tx: Repos,
  org: ConfigFile['organizations'][number],
  now: number,
  report: { changes: string[] },
): Promise<void> {
  if (org.alerts === undefined) return;
  const wanted = alertSettingsOf(org.alerts);
  if (isDeepStrictEqual(await tx.alerts.settings(org.id), wanted)) return;
  await tx.alerts.putSettings(org.id, wanted, now);
  report.changes.push(`organization ${org.id}: alerts updated`);
}
