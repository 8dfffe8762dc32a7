import { Type } from '@sinclair/typebox';
import { modeSummary } from '../../config/mode.js';
import type { App, AppServices } from '../../http/app-types.js';
import { responses } from '../../http/schemas.js';
import { ADMIN_ERRORS, ADMIN_SECURITY, ADMIN_TAGS } from './common.js';

const ServerMode = Type.Object({
  mode: Type.Union([Type.Literal('development'), Type.Literal('production')], { description: 'MAILROOM_ENV' }),
  relaxed: Type.Array(Type.String(), {
    description: 'What this mode allows that production does not, one sentence each; empty in plain production',
  }),
});

/** The mode this server runs in and what it relaxes: the operator UI shows it in its header. */
export function registerServerRoutes(app: App, services: Pick<AppServices, 'config'>): void {
  const summary = modeSummary(services.config);
  app.get(
    '/server',
    {
      schema: {
        tags: ADMIN_TAGS,
        security: ADMIN_SECURITY,
        summary: 'The mode this server runs in (MAILROOM_ENV) and what it relaxes',
        description:
          'The same lines `mailroom serve` prints at start. Development (what `npm start` runs) allows webhooks over http ' +
          "and to loopback, Cloudflare's CAPTCHA test secrets, a session cookie over plain http and a first-run demo " +
          'organization.',
        response: responses({ 200: ServerMode }, ADMIN_ERRORS),
      },
    },
    async () => summary,
  );
}
