import type { ConfigFile } from '../src/resources/inputs.js';
import { benchTemplate } from './bench-orgs.js';
import { orgId, SCALE_ORGS, SCALE_TEMPLATES } from './scale-seed.js';

/** Organization n's private key (bench only). */
export function privateKeyOf(n: number): string {
  return `sk_scale_${String(n).padStart(3, '0')}_0000000000000000000000`;
}

/** The 300 organizations of bench:scale, each with a private key, an outbox service and four templates. */
export function orgsConfig(): ConfigFile {
  return {
    organizations: Array.from({ length: SCALE_ORGS }, (_, n) => ({
      id: orgId(n),
      plan: 'business_200k',
      credits: 100_000_000,
      keys: [{ type: 'private' as const, key: privateKeyOf(n) }],
      services: [{ id: 'outbox', provider: 'outbox', default: true }],
      templates: SCALE_TEMPLATES.map((id) => benchTemplate(id, `Your ${id} from {{company}}`, 'noreply@mailroom.test')),
    })),
  } as ConfigFile;
}
