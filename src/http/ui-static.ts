import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import { ApiError } from '../errors/api-error.js';
import type { App, AppServices } from './app-types.js';

/**
 * The operator UI (issue 15): the files `npm run build` puts in dist/ui, served under /ui/ by
 * the same process as the API. Only when the admin API is on (MAILROOM_ADMIN_TOKEN): the UI is
 * nothing but a client of it, so without the token /ui/ is a 404 like /admin/v1.
 */

/**
 * Scripts only from the UI's own files (no inline script, no eval). Inline styles are allowed:
 * the template preview is an `<iframe sandbox srcdoc>` that inherits this policy, and e-mail
 * HTML is styled inline; the sandbox without allow-scripts keeps a template's script inert.
 * Images only from the UI itself and data: URLs, never remote: a preview or a sent message's
 * content may hold tracking pixels, and opening it must not tell its recipients' trackers the
 * operator's address (the preview shows remote images as blocked).
 */
export const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "frame-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': UI_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/** Vite names these by content hash: a changed file gets a new name, so a year is safe. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * The directory holding package.json: src/http under vitest and dist/src/http at run time are
 * at different depths, so walk up instead of counting `..`.
 */
export function projectRoot(from = path.dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${from}`);
    dir = parent;
  }
}

/** `root` is dist/ui; tests point it elsewhere to see what an unbuilt checkout answers. */
export async function registerUi(
  app: App,
  services: Pick<AppServices, 'config'>,
  root = path.join(projectRoot(), 'dist/ui'),
): Promise<void> {
  if (services.config.adminToken === undefined) return;
  const index = path.join(root, 'index.html');
  const assets = path.join(root, 'assets') + path.sep;

  await app.register(async (ui) => {
    // onRequest, so the 308, the 404 and 503 envelopes carry the headers too.
    ui.addHook('onRequest', async (request, reply) => {
      reply.headers(SECURITY_HEADERS);
      // A directory (`/ui/assets/`) is not a page: the static sender would answer it with a bare 400.
      const pathname = request.url.split('?')[0] ?? '';
      if (pathname.endsWith('/') && pathname !== '/ui/') {
        throw new ApiError('not_found', { message: `No endpoint matches ${request.method} ${pathname}.` });
      }
    });

    // The router ignores a trailing slash, so /ui and /ui/ reach this one route: /ui is sent to
    // /ui/, since the page's relative asset and API URLs resolve against that slash. The target
    // is relative (`ui/`), so behind a proxy that mounts mailroom under a path prefix the
    // browser stays under it (/mail/ui → /mail/ui/).
    ui.get('/ui/', { schema: { hide: true } }, async (request, reply) => {
      const query = request.url.indexOf('?');
      const pathname = query === -1 ? request.url : request.url.slice(0, query);
      if (!pathname.endsWith('/')) return reply.redirect(`ui/${query === -1 ? '' : request.url.slice(query)}`, 308);
      // Read on every request (it is a few hundred bytes): a rebuild shows without a restart,
      // and a missing build says what to do instead of a bare 404.
      let html: Buffer;
      try {
        html = await fs.promises.readFile(index);
      } catch {
        throw new ApiError('service_unavailable', {
          message: 'The operator UI is not built: run `npm run build` (it builds dist/ui).',
        });
      }
      return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(html);
    });

    // Without dist/ui every other /ui/ path is simply not found (the not-found envelope).
    if (!fs.existsSync(root)) return;
    await ui.register(fastifyStatic, {
      root,
      prefix: '/ui/',
      index: false,
      redirect: false,
      list: false,
      dotfiles: 'ignore',
      decorateReply: false,
      cacheControl: false,
      schemaHide: true,
      setHeaders: (res, file) => {
        res.setHeader('cache-control', file.startsWith(assets) ? IMMUTABLE : 'no-cache');
      },
    });
  });
}
