/**
 * Test mode in the hash (issue 27): the messages list and the overview show live messages unless
 * the link says `mode=test` (never both: the server counts them apart), so every view is a link.
 * The test inbox's own filters are in ./inbox-filters.ts. Pure: unit-tested in test/ui/test-mode.test.ts.
 */
import { allOf, type Query } from '../api/shapes.js';

export type Mode = NonNullable<Query<'/organizations/{org}/messages', 'get'>['mode']>;
export const MODES = allOf<Mode>()(['live', 'test']);

/** The mode a hash query names: `mode=test` is test, anything else (or nothing) live. */
export const modeFromQuery = (query: URLSearchParams): Mode =>
  query.get('mode')?.trim().toLowerCase() === 'test' ? 'test' : 'live';

/** The mode as a link's query: live is the default, so it is left out (`{}`), test is `{mode: 'test'}`. */
export const modeQuery = (mode: Mode): { mode?: 'test' } => (mode === 'test' ? { mode: 'test' } : {});
