import { applyConfig } from '../../src/admin/apply.js';
import type { ConfigFile } from '../../src/resources/inputs.js';
import type { Store } from '../../src/storage/store.js';

export const PUBLIC_KEY = 'pk_test_public_0001';
export const PRIVATE_KEY = 'sk_test_private_0001';

type OrgInput = ConfigFile['organizations'][number];
type TemplateSeed = NonNullable<OrgInput['templates']>[number];

/** The seeded `contact` template, for seeds that list templates of their own beside it. */
export const CONTACT_TEMPLATE: TemplateSeed = {
  id: 'contact',
  subject: 'Message from {{name}}',
  to: 'owner@acme.test',
  from_email: 'noreply@acme.test',
  reply_to: '{{email}}',
  html: '<p>{{message}}</p>',
  text: '{{message}}',
  strict_params: true,
  params: [
    { name: 'name', type: 'string', required: true, max_length: 100 },
    { name: 'email', type: 'email', required: true },
    { name: 'message', type: 'string', required: true },
  ],
};

/**
 * One organization with both keys, an outbox default service and a `contact` template,
 * through the same apply path operators use; `overrides` replaces top-level fields.
 */
export async function seedOrg(store: Store, overrides: Partial<OrgInput> = {}): Promise<OrgInput> {
  const org: OrgInput = {
    id: 'acme',
    name: 'Acme',
    plan: 'pro',
    credits: 100,
    security: { allowed_origins: ['example.com', '*.example.com'], allow_mobile_apps: true },
    keys: [
      { type: 'public', key: PUBLIC_KEY },
      { type: 'private', key: PRIVATE_KEY },
    ],
    services: [{ id: 'outbox', provider: 'outbox', default: true }],
    templates: [CONTACT_TEMPLATE],
    ...overrides,
  };
  await applyConfig(store, { organizations: [org] });
  return org;
}
