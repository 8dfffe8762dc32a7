import { errorReferencePage } from '../../errors/reference-page.js';
import type { App } from '../app-types.js';

/** The service documents itself: an index, the error reference and the OpenAPI document. */
export function registerDocs(app: App): void {
  const errorsPage = errorReferencePage();
  app.get('/docs', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>mailroom docs</title></head>
<body style="font:15px/1.5 system-ui,sans-serif;max-width:50rem;margin:2rem auto">
<h1>mailroom API</h1><ul>
<li><a href="/v1/openapi.json">OpenAPI 3.1 document</a></li>
<li><a href="/docs/reference/errors/">Error reference</a></li></ul></body></html>`),
  );
  app.get('/docs/reference/errors/', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').header('cache-control', 'public, max-age=3600').send(errorsPage),
  );
  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
