import { ConfigError } from '../config/env.js';
import type { ConfigFile } from '../resources/inputs.js';
import type { Repos } from '../storage/store.js';
import type { WebhookEndpointFields } from '../storage/webhook-endpoints.js';
import { insertEndpoint, sameHeaders, updateEndpoint, webhookFields, type WebhookCheckDeps } from './webhooks.js';

type OrgSection = ConfigFile['organizations'][number];

/** A webhook secret the file did not give, generated at the endpoint's creation: shown once. */
export interface GeneratedWebhookSecret {
  org_id: string;
  endpoint_id: string;
  secret: string;
}

export interface WebhookApplyOptions extends WebhookCheckDeps {
  /** How long the old secret signs after the file changes it (config.webhooks.secretGraceMs). */
  secretGraceMs: number;
}

export interface CheckedWebhook {
  id: string;
  fields: WebhookEndpointFields;
  /** `enabled` as the file says it, undefined when left out. */
  enabled: boolean | undefined;
  secret: string | undefined;
}

/**
 * Checks every endpoint of the file against the URL rules before anything is written (a
 * production URL resolving to a private address stops the start, naming the field), and
 * returns them by organization. A name that does not resolve now is accepted with a line in
 * `warnings` (a DNS blip must not stop a start; every connection checks the addresses it gets).
 */
export async function checkFileWebhooks(
  config: ConfigFile,
  deps: WebhookCheckDeps,
  warnings: string[] = [],
): Promise<Map<string, CheckedWebhook[]>> {
  const out = new Map<string, CheckedWebhook[]>();
  const problems: string[] = [];
  const where = (o: number, i: number, field: string) => `organizations/${o}/webhooks/${i}/${field.replaceAll('.', '/')}`;
  for (const [o, org] of config.organizations.entries()) {
    const checked: CheckedWebhook[] = [];
    for (const [i, w] of (org.webhooks ?? []).entries()) {
      const { fields, problems: found, warnings: warned } = await webhookFields(w, { ...deps, acceptUnresolved: true });
      for (const p of found) problems.push(`${where(o, i, p.field)}: ${p.message}`);
      for (const p of warned) {
        warnings.push(
          `webhook ${org.id}/${w.id}: ${where(o, i, p.field)}: ${p.message} now; accepted, and checked again at every connection`,
        );
      }
      checked.push({ id: w.id, fields, enabled: w.enabled, secret: w.secret });
    }
    out.set(org.id, checked);
  }
  if (problems.length > 0)
    throw new ConfigError(`webhooks in the config file: ${problems.length} problem(s):\n  - ${problems.join('\n  - ')}`);
  return out;
}

/**
 * Creates the file's endpoints that are missing and updates those that differ; endpoints the
 * file does not name are left alone. `enabled` from the file is used at creation, and `false`
 * disables; `true` or left out never re-enables an endpoint that mailroom or an operator
 * disabled (that is one API or CLI call), so a restart cannot undo a 410 or the failing-for-days
 * rule.
 * A `secret` in the file that differs from the stored one becomes the secret, the old one
 * signing beside it for the grace (a rotation done by changing the variable).
 */
export async function applyWebhooks(
  tx: Repos,
  org: OrgSection,
  checked: readonly CheckedWebhook[],
  options: WebhookApplyOptions,
  now: number,
  report: { changes: string[]; generatedWebhookSecrets: GeneratedWebhookSecret[] },
): Promise<void> {
  for (const w of checked) {
    const name = `webhook ${org.id}/${w.id}`;
    const current = await tx.webhookEndpoints.get(org.id, w.id);
    if (current === undefined) {
      const created = await insertEndpoint(tx, org.id, w.id, w.fields, w.secret, now);
      report.changes.push(`${name}: created`);
      if (w.secret === undefined)
        report.generatedWebhookSecrets.push({ org_id: org.id, endpoint_id: w.id, secret: created.secret });
      continue;
    }
    const wanted = { ...w.fields, enabled: w.enabled === false ? false : current.enabled };
    const same =
      current.url === wanted.url &&
      current.description === wanted.description &&
      JSON.stringify(current.events) === JSON.stringify(wanted.events) &&
      current.enabled === wanted.enabled &&
      sameHeaders(current.headers, wanted.headers);
    if (!same) {
      await updateEndpoint(tx, current, wanted, now);
      report.changes.push(`${name}: updated`);
    }
    if (w.secret !== undefined && w.secret !== current.secret) {
      await tx.webhookEndpoints.rotateSecret(org.id, w.id, w.secret, now + options.secretGraceMs, now);
      report.changes.push(`${name}: secret replaced (the old one signs too for ${Math.round(options.secretGraceMs / 1000)} s)`);
    }
  }
}
