import type { ConfigFile } from '../src/config/resources.js';
import { orgId, SCALE_ORGS, SCALE_TEMPLATES } from './scale-seed.js';

/** Organization n's private key (bench only). */
export function privateKeyOf(n: number): string {
  return `sk_scale_${String(n).padStart(3, '0')}_0000000000000000000000`;
}

/** The 300 organizations of bench:scale, each with a private key, an outbox service and four templates. */
export function orgsConfig(): ConfigFile {
  return {
    organizations: Array.from({ length: SCALE_ORGS }, (_, n) => ({
      id: orgId(n), plan: 'business_200k', credits: 100_000_000,
      keys: [{ type: 'private' as const, key: privateKeyOf(n) }],
      services: [{ id: 'outbox', provider: 'outbox', default: true }],
      templates: SCALE_TEMPLATES.map((id) => ({
        id, subject: 'Your ' + id + ' from {{company}}', to: '{{email}}', from_email: 'noreply@mailroom.test',
        html: '<p>Dear {{name}},</p><p>{{message}}</p><p>Plan: {{plan}}</p>', text: '{{message}}',
        allow_dynamic_recipients: true, strict_params: true,
        params: [
          { name: 'name', type: 'string', required: true, max_length: 100 },
          { name: 'email', type: 'email', required: true },
          { name: 'company', type: 'string' },
          { name: 'plan', type: 'string', enum: ['free', 'pro'] },
          { name: 'message', type: 'string', required: true },
        ],
      })),
    })),
  } as ConfigFile;
}
