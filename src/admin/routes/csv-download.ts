import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

/**
 * A CSV export's answer, shared by the message list's and the suppressions' (issue 29): an
 * attachment the operator UI downloads with a plain link (its session cookie goes with the GET),
 * streamed from an async iterable of lines with one chunk buffered ahead at most (objectMode
 * counts strings), so memory stays at a page or two however long the list: 1,000,000 messages
 * exported under a 64 MB heap cap (README, `npm run bench:export`).
 */
export function sendCsv(reply: FastifyReply, fileName: string, lines: AsyncIterable<string>): FastifyReply {
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${fileName}"`)
    .header('cache-control', 'no-store')
    .send(Readable.from(lines, { highWaterMark: 1 }));
}

/** The 200 of a CSV export in the OpenAPI document. */
export function csvResponse(columns: readonly string[]) {
  return {
    description: `text/csv (RFC 4180, UTF-8, CRLF line ends, a header row): ${columns.join(', ')}`,
    content: { 'text/csv': { schema: { type: 'string' } } },
  } as const;
}
