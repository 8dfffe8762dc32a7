import { Type, type Static } from '@sinclair/typebox';
import { SuppressionInput } from '../../resources/inputs.js';
import { ApiError } from '../../errors/api-error.js';
import type { App, AppServices } from '../../http/app-types.js';
import { responses } from '../../http/schemas.js';
import { normalizeAddress, type ListPage, type SuppressionEntry } from '../../storage/lists.js';
import {
  ADMIN_BODY_ERRORS,
  ADMIN_ERRORS,
  ADMIN_SECURITY,
  ADMIN_TAGS,
  invalidFields,
  LookupId,
  NoContent,
  OrgParams,
  requireOrganization,
} from './common.js';
import { BlockListResource, SuppressionResource, suppressionResource } from './resources.js';

const BlockListInput = Type.Object(
  {
    value: Type.String({
      minLength: 1,
      maxLength: 254,
      pattern: '\\S',
      description:
        'An address, a whole domain as @example.com, or a watched value to refuse; compared ' +
        'case-insensitively, an IDN domain by its A-label (stored so: @exämple.com is @xn--exmple-cua.com)',
    }),
  },
  { additionalProperties: false },
);

/** Where a suppression came from, by its stored reason: what the config file and the API write. */
const SOURCES = ['manual', 'hard_bounce', 'complaint'] as const;

/**
 * The source of a stored reason: the reason itself when it is one of SOURCES, or its leading
 * word when that is (a reason written as `hard_bounce: 550 …`); anything else is `other`.
 */
export function suppressionSource(reason: string): string {
  const word = /^[a-z_]+/.exec(reason.trim().toLowerCase())?.[0];
  return word !== undefined && (SOURCES as readonly string[]).includes(word) ? word : 'other';
}

const SuppressionListItem = Type.Composite([
  SuppressionResource,
  Type.Object({
    source: Type.String({ description: 'Why the address is listed, from `reason`: manual, hard_bounce, complaint (or other)' }),
    message_id: Type.Union([Type.String(), Type.Null()], {
      description: 'The message whose bounce or complaint suppressed the address; null when added by hand',
    }),
  }),
]);

function suppressionItem(s: SuppressionEntry): Static<typeof SuppressionListItem> {
  return { ...suppressionResource(s), source: suppressionSource(s.reason), message_id: s.message_id };
}

const ListQuery = Type.Object({
  q: Type.Optional(Type.String({ maxLength: 254, description: 'Only entries containing this text, case-insensitively' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'Entries per page; without it, the whole list' })),
  cursor: Type.Optional(Type.String({ maxLength: 1024, description: "The previous page's next_cursor" })),
});
const NextCursor = Type.Union([Type.String(), Type.Null()], {
  description: 'Pass as `cursor` for the next page; null on the last',
});

/** C0 and C1 control characters and DEL: never in a stored entry, and NUL is a 500 on PostgreSQL. */
const CONTROL = /\p{Cc}/u;

/** The page a validated query asks for; a cursor is the last value of the previous page. */
function listPage(query: Static<typeof ListQuery>): ListPage {
  if (query.q !== undefined && CONTROL.test(query.q))
    throw invalidFields([{ field: 'q', message: 'must not contain control characters' }], 'query');
  let after: string | undefined;
  if (query.cursor !== undefined) {
    try {
      const value: unknown = JSON.parse(Buffer.from(query.cursor, 'base64url').toString('utf8'));
      if (Array.isArray(value) && value.length === 1 && typeof value[0] === 'string' && !CONTROL.test(value[0])) after = value[0];
    } catch {
      // answered below
    }
    if (after === undefined)
      throw invalidFields([{ field: 'cursor', message: 'is not a cursor returned by this endpoint' }], 'query');
  }
  // One entry more than the page tells whether another page exists.
  return { q: query.q, after, limit: query.limit === undefined ? undefined : query.limit + 1 };
}

/** The page's items and the cursor after its last one. */
function pageOf<T>(
  rows: T[],
  limit: number | undefined,
  cursorValue: (row: T) => string,
): { items: T[]; next_cursor: string | null } {
  if (limit === undefined || rows.length <= limit) return { items: rows, next_cursor: null };
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return {
    items,
    next_cursor: last === undefined ? null : Buffer.from(JSON.stringify([cursorValue(last)])).toString('base64url'),
  };
}

/**
 * Suppressions (recipients refused with 451) and the block list (recipients or watched values
 * refused with 403). Both store entries by canonicalAddress (lower-cased, an IDN domain as its
 * A-label), and answer that form; adding an existing entry, in any spelling, is a 200 that
 * leaves it as it was, removing a missing one a 404.
 */
export function registerListRoutes(app: App, { store }: AppServices): void {
  app.get(
    '/organizations/:org/suppressions',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary:
          "List an organization's suppressed recipients by address, with why each is there; `q` searches, `limit` and " +
          '`cursor` page',
        params: OrgParams,
        querystring: ListQuery,
        response: responses({ 200: Type.Object({ items: Type.Array(SuppressionListItem), next_cursor: NextCursor }) }, [
          ...ADMIN_ERRORS,
          'invalid_body',
        ]),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const rows = await store.suppressions.page(org.id, listPage(request.query));
      const page = pageOf(rows, request.query.limit, (s) => s.email);
      return { items: page.items.map(suppressionItem), next_cursor: page.next_cursor };
    },
  );

  app.post(
    '/organizations/:org/suppressions',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Suppress a recipient (201 added, 200 already suppressed: the first reason is kept)',
        params: OrgParams,
        body: SuppressionInput,
        response: responses({ 200: SuppressionResource, 201: SuppressionResource }, ADMIN_BODY_ERRORS),
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      const { email, reason } = request.body;
      if (!normalizeAddress(email).includes('@')) throw invalidFields([{ field: 'email', message: 'must be an email address' }]);
      const added = await store.suppressions.add(org.id, email, reason ?? 'manual', store.clock.now());
      const entry = await store.suppressions.get(org.id, email);
      if (entry === undefined)
        throw new ApiError('conflict', { message: `The suppression of ${email} was removed concurrently.` });
      reply.code(added ? 201 : 200);
      return suppressionResource(entry);
    },
  );

  app.delete(
    '/organizations/:org/suppressions/:email',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Remove a recipient from the suppression list',
        params: Type.Object({ org: LookupId, email: Type.String({ minLength: 1, maxLength: 254 }) }),
        response: responses({ 204: NoContent }, ADMIN_ERRORS),
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      if (!(await store.suppressions.remove(org.id, request.params.email))) {
        throw new ApiError('not_found', { message: `${request.params.email} is not suppressed in organization "${org.id}".` });
      }
      return reply.code(204).send();
    },
  );

  app.get(
    '/organizations/:org/block-list',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary:
          "An organization's block list and the template parameter it also watches; `q` searches, `limit` and `cursor` page",
        params: OrgParams,
        querystring: ListQuery,
        response: responses({ 200: Type.Composite([BlockListResource, Type.Object({ next_cursor: NextCursor })]) }, [
          ...ADMIN_ERRORS,
          'invalid_body',
        ]),
      },
    },
    async (request) => {
      const org = await requireOrganization(store, request.params.org);
      const rows = await store.blockList.page(org.id, listPage(request.query));
      const page = pageOf(rows, request.query.limit, (v) => v);
      return { items: page.items, watch_variable: org.security.block_list_watch_variable, next_cursor: page.next_cursor };
    },
  );

  app.post(
    '/organizations/:org/block-list',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Add a block-list entry (201 added, 200 already listed)',
        params: OrgParams,
        body: BlockListInput,
        response: responses(
          { 200: Type.Object({ value: Type.String() }), 201: Type.Object({ value: Type.String() }) },
          ADMIN_BODY_ERRORS,
        ),
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      const added = await store.blockList.add(org.id, request.body.value, store.clock.now());
      reply.code(added ? 201 : 200);
      return { value: normalizeAddress(request.body.value) };
    },
  );

  app.delete(
    '/organizations/:org/block-list/:value',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'Remove a block-list entry',
        params: Type.Object({ org: LookupId, value: Type.String({ minLength: 1, maxLength: 254 }) }),
        response: responses({ 204: NoContent }, ADMIN_ERRORS),
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      if (!(await store.blockList.remove(org.id, request.params.value))) {
        throw new ApiError('not_found', {
          message: `"${request.params.value}" is not on the block list of organization "${org.id}".`,
        });
      }
      return reply.code(204).send();
    },
  );
}
