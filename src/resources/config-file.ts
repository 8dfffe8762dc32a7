import { Value } from '@sinclair/typebox/value';
import { fileProblems, parseYamlText, readYamlFile } from '../config/file.js';
import { linkDomainProblems } from '../domain/link-domains.js';
import { templateProblems } from '../templates/check.js';
import { parseEndpointUrl } from '../webhooks/url-guard.js';
import { ConfigFile } from './inputs.js';
import { keyInputProblems } from './key-details.js';
import { eventFilter, eventsProblems, sampleParamsProblem, secretProblem, templateFields } from './normalize.js';
import { failoverProblems, serviceProblems } from './provider-settings.js';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * A declarative config file, read (src/config/file.ts) and checked. Every problem names the
 * file, the path inside it (`organizations/0/templates/1/params/2/pattern`) and what is wrong;
 * nothing is applied unless the whole file is right. `env` left out: the process's.
 */
export function readConfigFile(file: string, env?: Env): ConfigFile {
  return checkedConfig(readYamlFile(file, env), file);
}

export function parseConfigText(text: string, file: string, env?: Env): ConfigFile {
  return checkedConfig(parseYamlText(text, file, env), file);
}

function checkedConfig(data: unknown, file: string): ConfigFile {
  const problems: string[] = [];
  for (const e of Value.Errors(ConfigFile, data)) {
    problems.push(`${e.path.slice(1) || '(top level)'}: ${e.message}${describeValue(e.value)}`);
    if (problems.length >= 20) break;
  }
  if (problems.length === 0) problems.push(...semanticProblems(data as ConfigFile));
  if (problems.length > 0) throw fileProblems(file, problems);
  return data as ConfigFile;
}

function describeValue(value: unknown): string {
  if (value === undefined || typeof value === 'object') return '';
  return ` (got ${JSON.stringify(value)})`;
}

/** What the schema cannot say: duplicate ids, two defaults, broken templates, dangling service ids. */
function semanticProblems(config: ConfigFile): string[] {
  const problems: string[] = [];
  const orgIds = new Set<string>();
  const keyValues = new Set<string>();
  config.organizations.forEach((org, o) => {
    const at = `organizations/${o}`;
    if (orgIds.has(org.id)) problems.push(`${at}/id: organization "${org.id}" appears twice`);
    orgIds.add(org.id);

    (org.keys ?? []).forEach((k, i) => {
      for (const p of keyInputProblems(k)) problems.push(`${at}/keys/${i}/${p.field}: ${p.message}`);
      if (k.key === undefined) return;
      // One way only (issue 27, risk R1): a test key's value names its mode; a live one may start pk_test_.
      const prefix = `${k.type === 'public' ? 'pk' : 'sk'}_${k.mode === 'test' ? 'test_' : ''}`;
      if (!k.key.startsWith(prefix)) problems.push(`${at}/keys/${i}/key: a ${k.type} key must start with ${prefix}`);
      if (k.type === 'public' && k.key.length > 200) problems.push(`${at}/keys/${i}/key: public keys are at most 200 characters`);
      if (keyValues.has(k.key)) problems.push(`${at}/keys/${i}/key: the same key appears twice`);
      keyValues.add(k.key);
    });

    const serviceIds = new Set<string>();
    let defaults = 0;
    (org.services ?? []).forEach((s, i) => {
      if (serviceIds.has(s.id)) problems.push(`${at}/services/${i}/id: service "${s.id}" appears twice`);
      serviceIds.add(s.id);
      if (s.default === true) defaults += 1;
      for (const p of serviceProblems(s.id, s)) {
        // "provider sendgrid needs a sendgrid block": the block is missing, not a field inside it.
        if (p.field === s.provider)
          problems.push(
            `${at}/services/${i}: provider ${s.provider} ` +
              `needs ${/^s(mtp|es)$/.test(s.provider) ? 'an' : 'a'} ${s.provider} block`,
          );
        else problems.push(`${at}/services/${i}/${p.field.replaceAll('.', '/')}: ${p.message}`);
      }
      for (const p of eventsProblems(s.events)) problems.push(`${at}/services/${i}/${p.field.replace('.', '/')}: ${p.message}`);
    });
    if (defaults > 1) problems.push(`${at}/services: more than one service is marked default`);
    // A failover chain names services of the same organization in this file (issue 14).
    const chains = new Map((org.services ?? []).map((s) => [s.id, s.failover ?? []]));
    (org.services ?? []).forEach((s, i) => {
      if (s.failover === undefined) return;
      for (const p of failoverProblems(s.id, chains))
        problems.push(`${at}/services/${i}/${p.field.replaceAll('.', '/')}: ${p.message}`);
    });

    for (const p of linkDomainProblems(org.security?.link_domains))
      problems.push(`${at}/security/${p.field.replace('.', '/')}: ${p.message}`);

    const templateIds = new Set<string>();
    (org.templates ?? []).forEach((t, i) => {
      const tAt = `${at}/templates/${i}`;
      if (templateIds.has(t.id)) problems.push(`${tAt}/id: template "${t.id}" appears twice`);
      templateIds.add(t.id);
      const fields = templateFields(t.id, t);
      for (const p of templateProblems(fields, fields.params)) problems.push(`${tAt}/${p.path}: ${p.message}`);
      const sample = sampleParamsProblem(fields.sample_params);
      if (sample !== undefined) problems.push(`${tAt}/sample_params: ${sample}`);
    });

    problems.push(...webhookProblems(org, at));
  });
  return problems;
}

/**
 * Webhook endpoints: unique ids, known event types, a well-formed secret and URL. Whether the
 * URL may be reached (production: https, public addresses) is checked when the file is applied,
 * where the policy is known and names can be resolved (src/admin/apply-webhooks.ts).
 */
function webhookProblems(org: ConfigFile['organizations'][number], at: string): string[] {
  const problems: string[] = [];
  const ids = new Set<string>();
  (org.webhooks ?? []).forEach((w, i) => {
    const wAt = `${at}/webhooks/${i}`;
    if (ids.has(w.id)) problems.push(`${wAt}/id: webhook "${w.id}" appears twice`);
    ids.add(w.id);
    const found: Array<{ field: string; message: string }> = [];
    eventFilter(w.events, found);
    const secret = secretProblem(w.secret);
    if (secret !== null) found.push(secret);
    const url = parseEndpointUrl(w.url);
    if (typeof url === 'string') found.push({ field: 'url', message: url.replace(/^url /, '') });
    for (const p of found) problems.push(`${wAt}/${p.field.replaceAll('.', '/')}: ${p.message}`);
  });
  return problems;
}
