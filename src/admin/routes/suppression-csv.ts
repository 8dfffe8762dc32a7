import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../errors/api-error.js';
import type { App, AppServices } from '../../http/app-types.js';
import { responses } from '../../http/schemas.js';
import {
  EXPORT_COLUMNS,
  exportSuppressions,
  IMPORT_MAX_BYTES,
  IMPORT_MAX_ROWS,
  importSuppressions,
  INVALID_LISTED,
  REASONS,
} from '../suppression-csv.js';
import { ADMIN_BODY_ERRORS, ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS, OrgParams, requireOrganization } from './common.js';
import { csvResponse, sendCsv } from './csv-download.js';
import { suppressionSource } from './lists.js';

const CSV_DOWNLOAD = csvResponse(EXPORT_COLUMNS);

const ImportResult = Type.Object({
  rows: Type.Integer({ description: 'Data rows read (the header and empty lines not counted)' }),
  imported: Type.Integer({ description: 'Addresses added' }),
  already_suppressed: Type.Integer({ description: 'Addresses that were suppressed already (their first reason is kept)' }),
  duplicates: Type.Integer({ description: 'Rows whose address came earlier in the same file' }),
  invalid_count: Type.Integer({ description: 'Rows not imported because they are invalid' }),
  invalid: Type.Array(
    Type.Object({
      line: Type.Integer({ description: '1-based line of the file the row starts on (the header is line 1)' }),
      value: Type.String({ description: 'The email cell as sent (at most 300 characters)' }),
      reason: Type.String(),
    }),
    { description: `The first ${INVALID_LISTED} invalid rows` },
  ),
});

/**
 * GET …/suppressions/export.csv and POST …/suppressions/import (issue 29). The export is a
 * plain GET, so the operator UI downloads it with a link: its session cookie goes with the
 * navigation and a GET needs no CSRF token.
 */
export function registerSuppressionCsvRoutes(app: App, { store, config }: AppServices): void {
  app.get(
    '/organizations/:org/suppressions/export.csv',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: "An organization's suppression list as CSV, by address",
        description:
          'Streamed a page at a time. Cells are quoted per RFC 4180; a cell starting with = + - @ tab or CR is ' +
          "prefixed with ' so a spreadsheet does not run it (the import takes that prefix off again).",
        params: OrgParams,
        response: { ...responses({}, ADMIN_ERRORS), 200: CSV_DOWNLOAD },
      },
    },
    async (request, reply) => {
      const org = await requireOrganization(store, request.params.org);
      const name = `suppressions-${org.id.replace(/[^A-Za-z0-9_-]/g, '_')}.csv`;
      return sendCsv(reply, name, exportSuppressions(store, org.id, suppressionSource));
    },
  );

  const limit = Math.min(IMPORT_MAX_BYTES, config.bodyLimitBytes);
  app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    scope.addContentTypeParser('text/csv', { parseAs: 'string', bodyLimit: limit }, (_request, body, done) => done(null, body));
    scope.post(
      '/organizations/:org/suppressions/import',
      {
        bodyLimit: limit,
        schema: {
          tags: ADMIN_TAGS,
          security: ADMIN_SECURITY,
          summary: 'Suppress the addresses of a CSV file (Content-Type: text/csv)',
          description:
            `A header row naming \`email\` and optionally \`reason\` (${REASONS.join(', ')}; empty: manual); other ` +
            `columns are ignored, so an export imports as it is. At most ${IMPORT_MAX_ROWS} rows and ${limit} bytes ` +
            '(413 beyond). Addresses are stored as the suppression API stores them (lower-cased, an IDN domain as its ' +
            'A-label). A bad row is listed by its line and skipped; only a missing or unreadable header refuses the file ' +
            '(400). Rows are inserted 500 to a transaction.',
          params: OrgParams,
          response: responses({ 200: ImportResult }, [...ADMIN_BODY_ERRORS, 'payload_too_large']),
        },
      },
      async (request) => {
        const org = await requireOrganization(store, request.params.org);
        const body: unknown = request.body;
        if (typeof body !== 'string') {
          throw new ApiError('bad_request', { message: 'Send the file as the body with Content-Type: text/csv.' });
        }
        return importSuppressions(store, org.id, body);
      },
    );
  });
}
