import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOG, ERROR_CODES, docsUrlFor } from '../../src/errors/catalog.js';
import { freshApp, type TestApp } from '../support/app.js';
import { readSpec, specErrorRows } from '../support/spec.js';

const spec = readSpec();

describe('error catalog', () => {
  it.skipIf(spec === undefined)('holds exactly the codes and statuses of the spec Errors table', () => {
    const rows = specErrorRows(spec ?? '');
    expect(rows.length).toBeGreaterThan(40);
    const fromSpec = Object.fromEntries(rows.map((r) => [r.code, r.status]));
    const fromCatalog = Object.fromEntries(ERROR_CODES.map((c) => [c, ERROR_CATALOG[c].status]));
    expect(fromCatalog).toEqual(fromSpec);
  });

  it('builds docs URLs with hyphenated anchors', () => {
    expect(docsUrlFor('https://x.test/docs/', 'invalid_public_key')).toBe(
      'https://x.test/docs/reference/errors/#invalid-public-key',
    );
  });

  describe('served reference page', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await freshApp('sqlite');
    });
    afterAll(async () => t.cleanup());

    it('has one anchor per catalog code, where every docs_url points', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/docs/reference/errors/' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/text\/html/);
      const anchors = [...res.body.matchAll(/<tr id="([a-z-]+)">/g)].map((m) => m[1]);
      expect(anchors).toEqual(ERROR_CODES.map((c) => c.replaceAll('_', '-')));
      // docs_url of a real error response resolves into this page.
      const err = await t.app.inject({ method: 'GET', url: '/v1/nowhere' });
      const url = new URL(err.json().error.docs_url);
      expect(url.pathname).toBe('/docs/reference/errors/');
      expect(anchors).toContain(url.hash.slice(1));
    });
  });
});
