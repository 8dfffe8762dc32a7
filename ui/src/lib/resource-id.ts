/**
 * Ids a create form refuses before asking the server. `new` is the create pages' own address
 * (`#/orgs/new`, `#/orgs/:org/services/new`, `…/templates/new`): a resource with that id could
 * be created through the API, but its page could never be opened. Pure: no DOM.
 */
export const RESERVED_ID_PROBLEM = '"new" is reserved (it is the address of this create page): choose another id';

/** The problem with `id` as a new resource's id, if it is reserved. */
export function reservedIdProblem(id: string): string | undefined {
  return id === 'new' ? RESERVED_ID_PROBLEM : undefined;
}
