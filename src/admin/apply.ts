import { isDeepStrictEqual } from 'node:util';
import { releaseIfUnlimited } from '../credits/unlimited.js';
import { ConfigError, type Config } from '../config/env.js';
import { organizationFields, serviceFields, templateFields } from '../resources/normalize.js';
import type { ConfigFile } from '../resources/inputs.js';
import type { ApiKey, KeyCreator, KeyMode, KeyScope, KeyType } from '../domain/types.js';
import { keyName } from '../resources/key-details.js';
import type { Repos, Store } from '../storage/store.js';
import { applyWebhooks, checkFileWebhooks, type GeneratedWebhookSecret, type WebhookApplyOptions } from './apply-webhooks.js';
import { putService } from './services.js';
import { applyAlerts } from './apply-alerts.js';
import { unlessCorrupt } from '../storage/json.js';

export interface ApplyReport {
  /** One line per created or updated thing; empty when the file changed nothing. */
  changes: string[];
  /** Keys the file asked for without a value, generated now: shown once, never stored in clear. */
  generatedKeys: Array<{ org_id: string; type: KeyType; mode: KeyMode; key: string }>;
  /** Webhook endpoints created without a `secret` in the file: their generated secret, shown once. */
  generatedWebhookSecrets: GeneratedWebhookSecret[];
  /** What was accepted but deserves a look: a webhook URL whose name did not resolve at apply. */
  warnings: string[];
}

/**
 * How the file's webhook URLs are checked and rotations timed. Left out: the production rules
 * (https, public addresses) and a 24 h grace, so a caller that forgets is too strict, never lax.
 */
const STRICT_WEBHOOKS: WebhookApplyOptions = {
  urlPolicy: { production: true, allowPrivate: false },
  secretGraceMs: 24 * 3600 * 1000,
};

/** The webhook rules of this deployment (MAILROOM_ENV, MAILROOM_WEBHOOK_ALLOW_PRIVATE, the rotation grace). */
export const webhookApplyOptions = (config: Config): WebhookApplyOptions => ({
  urlPolicy: config.webhooks.urlPolicy,
  secretGraceMs: config.webhooks.secretGraceMs,
});

/**
 * What `mailroom apply` and `mailroom serve` print after the changes, one line each: warnings,
 * then what was generated — the only time these values are shown (keys are stored hashed; a
 * webhook secret is never read back).
 */
export function generatedLines(report: ApplyReport): string[] {
  return [
    ...report.warnings.map((w) => `  warning: ${w}`),
    ...report.generatedKeys.map((k) => `  generated ${k.mode === 'test' ? 'test ' : ''}${k.type} key for ${k.org_id}: ${k.key}`),
    ...report.generatedWebhookSecrets.map((w) => `  generated webhook secret for ${w.org_id}/${w.endpoint_id}: ${w.secret}`),
  ];
}

/**
 * Applies a checked config file in one transaction (webhook endpoints: src/admin/apply-webhooks.ts): creates what is missing,
 * updates what differs, leaves alone what is equal (a second apply reports no changes) and never deletes
 * what the file does not name. `credits` is a starting balance: it is used when an
 * organization is created, and top-ups go through `mailroom credits add`, so a restart with
 * the same file never resets a balance that sends have used.
 */
export async function applyConfig(
  store: Store,
  config: ConfigFile,
  webhooks: WebhookApplyOptions = STRICT_WEBHOOKS,
  /** Who the keys it makes are recorded as made by: `config`, or `bootstrap` for the demo (issue 29). */
  createdBy: Extract<KeyCreator, 'config' | 'bootstrap'> = 'config',
): Promise<ApplyReport> {
  // URL checks resolve names: done before the transaction, which then only writes.
  const warnings: string[] = [];
  const checkedWebhooks = await checkFileWebhooks(config, webhooks, warnings);
  const now = store.clock.now();
  const report: ApplyReport = { changes: [], generatedKeys: [], generatedWebhookSecrets: [], warnings };
  await store.transaction(async (tx) => {
    for (const org of config.organizations) {
      await applyOrganization(tx, org, now, report, createdBy);
      await applyWebhooks(tx, org, checkedWebhooks.get(org.id) ?? [], webhooks, now, report);
      await applyAlerts(tx, org, now, report);
    }
  });
  return report;
}

type OrgSection = ConfigFile['organizations'][number];

async function applyOrganization(
  tx: Repos,
  org: OrgSection,
  now: number,
  report: ApplyReport,
  createdBy: KeyCreator,
): Promise<void> {
  const current = await tx.organizations.get(org.id);
  const fields = organizationFields(org.id, org, current);
  if (current === undefined) {
    await tx.organizations.insert(org.id, fields, now);
    report.changes.push(`organization ${org.id}: created`);
  } else {
    const { id: _id, created_at: _c, updated_at: _u, ...stored } = current;
    if (!isDeepStrictEqual(stored, fields)) {
      await tx.organizations.update(org.id, fields, now);
      report.changes.push(`organization ${org.id}: updated`);
    }
  }
  const released = await releaseIfUnlimited(tx, org.id, fields.credit_mode, now);
  if (released.length > 0)
    report.changes.push(`organization ${org.id}: ${released.length} held message(s) released (credits unlimited)`);

  const blockList = org.security?.block_list?.list ?? [];
  for (const value of blockList) {
    if (await tx.blockList.add(org.id, value, now))
      report.changes.push(`organization ${org.id}: block-list entry ${value} added`);
  }

  await applyKeys(tx, org, now, report, createdBy);

  for (const s of org.services ?? []) {
    const wanted = serviceFields(s);
    // A stored row that cannot be read is replaced like a changed one.
    const existing = await unlessCorrupt(tx.services.get(org.id, s.id));
    const same =
      existing !== undefined &&
      isDeepStrictEqual(
        {
          provider: existing.provider,
          settings: existing.settings,
          is_default: existing.is_default,
          max_per_second: existing.max_per_second,
        },
        wanted,
      );
    if (!same) {
      const { result, requeued } = await putService(tx, org.id, s.id, wanted, now);
      report.changes.push(`service ${org.id}/${s.id}: ${result}${requeued > 0 ? ` (${requeued} held message(s) requeued)` : ''}`);
    }
  }

  for (const t of org.templates ?? []) {
    const wanted = templateFields(t.id, t);
    if (wanted.service_id !== null && (await tx.services.get(org.id, wanted.service_id)) === undefined) {
      throw new ConfigError(
        `organization ${org.id}, template ${t.id}: service_id "${wanted.service_id}" names no service of this organization`,
      );
    }
    const existing = await tx.templates.get(org.id, t.id);
    let same = false;
    if (existing !== undefined) {
      const { org_id: _o, id: _i, version: _v, created_at: _c, updated_at: _u, ...stored } = existing;
      same = isDeepStrictEqual(stored, wanted);
    }
    if (!same) report.changes.push(`template ${org.id}/${t.id}: ${await tx.templates.put(org.id, t.id, wanted, now)}`);
  }

  for (const s of org.suppressions ?? []) {
    if (await tx.suppressions.add(org.id, s.email, s.reason ?? 'manual', now)) {
      report.changes.push(`organization ${org.id}: suppression ${s.email} added`);
    }
  }
}

/**
 * Keys: one with a value (`key`) is pinned, found by that value; one without is generated unless
 * an active key of its type, mode and scope exists (with a `name`: of that name too). A name or
 * scope the file gives is applied to the key it finds; left out, what is stored stays (a rename in
 * the UI survives the next apply). The mode is never changed by a file (it decides whether mail leaves).
 */
async function applyKeys(tx: Repos, org: OrgSection, now: number, report: ApplyReport, createdBy: KeyCreator): Promise<void> {
  const existing = await tx.keys.list(org.id);
  for (const k of org.keys ?? []) {
    const mode = k.mode ?? 'live';
    const name = keyName(k.name);
    const details = { name, scope: k.scope, createdBy };
    const what = `${mode === 'test' ? 'test ' : ''}${k.type} key`;
    if (k.key !== undefined) {
      const found = await tx.keys.findByValue(k.key);
      if (found === undefined) {
        await tx.keys.insert(org.id, k.type, now, k.key, mode, details);
        report.changes.push(`organization ${org.id}: ${what} ${k.key.slice(0, 3)}… added`);
      } else if (found.org_id !== org.id || found.type !== k.type) {
        throw new ConfigError(`organization ${org.id}: key ${found.hint} already belongs to another organization or type`);
      } else if (found.mode !== mode) {
        // The mode decides whether a send leaves the machine and takes credits: never changed by a file.
        throw new ConfigError(`organization ${org.id}: key ${found.hint} is a ${found.mode} key, the file says ${mode}`);
      } else {
        await applyKeyDetails(tx, org.id, found, { name, scope: k.scope }, report);
      }
      // A pinned key that was revoked stays revoked: re-applying a file must not undo a revocation.
      continue;
    }
    const scope = k.scope ?? 'full';
    const match = existing.find(
      (e) =>
        e.type === k.type &&
        e.mode === mode &&
        e.status === 'active' &&
        e.scope === scope &&
        (name === undefined || e.name === name),
    );
    if (match === undefined) {
      const issued = await tx.keys.insert(org.id, k.type, now, undefined, mode, details);
      existing.push(issued.key);
      report.generatedKeys.push({ org_id: org.id, type: k.type, mode, key: issued.value });
      report.changes.push(`organization ${org.id}: ${what}${name === undefined ? '' : ` "${name}"`} generated`);
    }
  }
}

async function applyKeyDetails(
  tx: Repos,
  orgId: string,
  key: ApiKey,
  wanted: { name: string | undefined; scope: KeyScope | undefined },
  report: ApplyReport,
): Promise<void> {
  const changes = {
    ...(wanted.name !== undefined && wanted.name !== key.name && { name: wanted.name }),
    ...(wanted.scope !== undefined && wanted.scope !== key.scope && { scope: wanted.scope }),
  };
  if (Object.keys(changes).length === 0) return;
  await tx.keys.update(orgId, key.id, changes);
  report.changes.push(`organization ${orgId}: key ${key.hint} ${Object.keys(changes).join(' and ')} updated`);
}
