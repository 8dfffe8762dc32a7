import { isDeepStrictEqual } from 'node:util';
import { releaseIfUnlimited } from '../credits/unlimited.js';
import { organizationFields } from '../resources/normalize.js';
import type { OrganizationSettingsInput } from '../resources/inputs.js';
import type { Organization } from '../domain/types.js';
import { invalidFields } from './routes/common.js';
import { linkDomainProblems } from '../domain/link-domains.js';
import { normalizeAddress } from '../storage/lists.js';
import type { Store } from '../storage/store.js';

/**
 * Writes an organization from a complete admin PUT body (required fields checked already), in
 * one transaction. Unlike the config file, which only ever adds block-list entries, a PUT that
 * names `security.block_list.list` makes the list exactly that: the PUT replaces. A body equal
 * to what is stored changes nothing, not even `updated_at`. A link domain that is no domain name
 * is a 400 naming it (`security.link_domains.<i>`), as the schema's own checks are, unless it is
 * stored already (from before the rule). Credits `unlimited` releases the held messages (src/credits/unlimited.ts).
 */
export async function putOrganization(
  store: Store,
  id: string,
  body: OrganizationSettingsInput,
): Promise<{ created: boolean; org: Organization }> {
  const now = store.clock.now();
  return store.transaction(async (tx) => {
    const current = await tx.organizations.get(id);
    const problems = linkDomainProblems(body.security?.link_domains, current?.security.link_domains);
    if (problems.length > 0) throw invalidFields(problems.map((p) => ({ field: `security.${p.field}`, message: p.message })));
    const fields = organizationFields(id, body, current);
    if (current === undefined) {
      await tx.organizations.insert(id, fields, now);
    } else {
      const { id: _id, created_at: _c, updated_at: _u, ...stored } = current;
      if (!isDeepStrictEqual(stored, fields)) await tx.organizations.update(id, fields, now);
    }
    await releaseIfUnlimited(tx, id, fields.credit_mode, now);
    const list = body.security?.block_list?.list;
    if (list !== undefined) {
      const wanted = new Set(list.map(normalizeAddress));
      for (const value of await tx.blockList.list(id)) if (!wanted.has(value)) await tx.blockList.remove(id, value);
      for (const value of wanted) await tx.blockList.add(id, value, now);
    }
    const org = await tx.organizations.get(id);
    if (org === undefined) throw new Error(`organization ${id} vanished inside its own transaction`);
    return { created: current === undefined, org };
  });
}
