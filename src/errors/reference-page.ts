import { ERROR_CATALOG, ERROR_CODES, errorAnchor } from './catalog.js';

export const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** The error reference every `docs_url` points into: one anchor per code of the catalog. */
export function errorReferencePage(): string {
  const rows = ERROR_CODES.map((code) => {
    const { status, message } = ERROR_CATALOG[code];
    return (
      `<tr id="${errorAnchor(code)}"><td>${status}</td><td><a ` +
      `href="#${errorAnchor(code)}"><code>${code}</code></a></td><td>${escapeHtml(message)}</td></tr>`
    );
  }).join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>mailroom: error reference</title>
<meta name="viewport" content="width=device-width,initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.4rem;text-align:left;vertical-align:top}
tr:target{background:#fff6d5}code{font-size:.95em}</style></head>
<body><h1>Error reference</h1>
<p>Every error response has the shape <code>{"error":{"code","message","docs_url","details"?}}</code>.
A 429 always carries <code>Retry-After</code> in seconds; a 500 carries <code>details.request_id</code>.</p>
<table><thead><tr><th>HTTP</th><th>Code</th><th>Meaning</th></tr></thead><tbody>
${rows}
</tbody></table></body></html>
`;
}
