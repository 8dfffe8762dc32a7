import { Type } from '@sinclair/typebox';
import type { Organization } from '../../domain/types.js';
import { ApiError } from '../../errors/api-error.js';
import type { ErrorCode } from '../../errors/catalog.js';
import type { Store } from '../../storage/store.js';

/** What every admin route's schema carries, so the OpenAPI document groups and secures them. */
export const ADMIN_TAGS: string[] = ['admin'];
/** The admin token as a bearer, or the UI's session cookie (writes with it also need X-CSRF-Token). */
export const ADMIN_SECURITY: Array<Record<string, string[]>> = [{ adminToken: [] }, { adminSession: [] }];

/** Errors any admin route can answer besides its own. */
export const ADMIN_ERRORS: readonly ErrorCode[] = ['unauthorized', 'not_found'];
export const ADMIN_BODY_ERRORS: readonly ErrorCode[] = [...ADMIN_ERRORS, 'bad_request', 'invalid_body'];

/**
 * Ids that are only looked up are plain bounded strings (an id that cannot exist is a 404);
 * ids that create something use ResourceId, the rule the config file applies.
 */
export const LookupId = Type.String({ minLength: 1, maxLength: 64 });
export const OrgParams = Type.Object({ org: LookupId });

export const NoContent = Type.Null({ description: 'No content' });

export async function requireOrganization(store: Store, id: string): Promise<Organization> {
  const org = await store.organizations.get(id);
  if (org === undefined) throw new ApiError('not_found', { message: `Organization "${id}" does not exist.` });
  return org;
}

/**
 * A 400 `invalid_body` in the same shape the validator gives: `details.fields: [{ field, message }]`.
 * `where` names what was wrong, as the validator does: the body, or the query string.
 */
export function invalidFields(fields: Array<{ field: string; message: string }>, where: 'body' | 'query' = 'body'): ApiError {
  return new ApiError('invalid_body', {
    message: `The request ${where} is invalid: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}.`,
    details: { fields },
  });
}

/** `params/0/pattern` (the checkers' paths) → `params.0.pattern` (the validator's field names). */
export const fieldPath = (path: string): string => path.split('/').filter(Boolean).join('.');
