/** Shapes of the admin API's answers that every page reads (generated: ./shapes.ts). */
import type { Answer, Schema } from './shapes.js';

export type ErrorEnvelope = Schema<'ErrorEnvelope'>;

/** POST /admin/v1/session (GET answers the same for a cookie session). */
export type Session = Answer<'/session', 'post'>;

/** GET /admin/v1/server: the mode the server runs in and what it relaxes. */
export type ServerMode = Answer<'/server', 'get'>;
