import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

/**
 * Every folder but the HTTP layer: they run with no HTTP around (the worker, the events intake's
 * verification, the inbound listener, the CLI's apply) and import neither http/ nor Fastify.
 */
const NO_HTTP = [
  'domain',
  'send',
  'protection',
  'attachments',
  'credits',
  'events',
  'inbound',
  'webhooks',
  'delivery',
  'storage',
  'templates',
  'providers',
  'resources',
  'config',
  'net',
  'blobs',
  'observability',
  'bootstrap',
  'testmode',
  'submission',
  'smtp',
  'mime',
  'alerts',
];
/** The HTTP layer: the app, its routes and plugins, the admin API, the error handler, the CLI that serves them. */
const HTTP_LAYER = ['http', 'admin', 'errors', 'cli', 'app.ts'];

/**
 * Folders that import nothing else of src/ (issue 26 §2): config reads the environment and the file; the descriptors are data.
 */
const LEAVES = ['config', 'providers'];
/**
 * The one file a leaf may import: the loopback host rule as a pattern string, itself importing nothing (the endpoint schema's
 * rule).
 */
const LEAF_MAY_IMPORT = ['net/loopback-pattern.js'];

interface Edge {
  file: string;
  specifier: string;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

/** A file's top folder under src/ (`send`, `http`, …); a file directly in src/ is its own unit. */
function unitOf(file: string): string {
  return path.relative(SRC, file).split(path.sep)[0] ?? '';
}

/**
 * Every module a file names: static imports, `export … from`, `import type` and `import()`,
 * as the TypeScript compiler's own pre-processor reads them (comments and strings that merely
 * look like imports are not counted).
 */
function specifiers(file: string): string[] {
  const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
  return info.importedFiles.map((f) => f.fileName);
}

const files = sourceFiles(SRC);
const imports = new Map(files.map((f) => [f, specifiers(f)]));

/** unit → unit → the imports that make that edge. */
function unitGraph(): Map<string, Map<string, Edge[]>> {
  const graph = new Map<string, Map<string, Edge[]>>();
  for (const [file, specs] of imports) {
    const from = unitOf(file);
    for (const specifier of specs) {
      if (!specifier.startsWith('.')) continue;
      const to = unitOf(path.resolve(path.dirname(file), specifier));
      if (to === from) continue;
      const edges = graph.get(from) ?? new Map<string, Edge[]>();
      edges.set(to, [...(edges.get(to) ?? []), { file: path.relative(SRC, file), specifier }]);
      graph.set(from, edges);
    }
  }
  return graph;
}

/** Issue 17, item 2: the domain knows no HTTP, and the folders of src/ form layers. */
describe('layers of src/', () => {
  it('finds the source files and their imports', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(imports.get(path.join(SRC, 'app.ts'))).toContain('./http/app-types.js');
  });

  it('has no two folders that import each other', () => {
    const graph = unitGraph();
    const mutual: string[] = [];
    for (const [a, edges] of graph) {
      for (const [b, there] of edges) {
        const back = graph.get(b)?.get(a);
        if (a < b && back !== undefined) {
          const show = (e: Edge[]) => e.map((x) => `${x.file} → ${x.specifier}`).join(', ');
          mutual.push(`${a} <-> ${b}: ${show(there)} | ${show(back)}`);
        }
      }
    }
    expect(mutual).toEqual([]);
  });

  it('has no loop of folders of any length (a → b → c → a): they form layers', () => {
    const graph = unitGraph();
    const loops: string[] = [];
    // Depth-first search from each folder; a path that comes back to its start is a loop.
    const walk = (start: string, at: string, trail: string[]): void => {
      for (const next of graph.get(at)?.keys() ?? []) {
        if (next === start) loops.push([...trail, start].join(' → '));
        else if (!trail.includes(next) && next > start) walk(start, next, [...trail, next]);
      }
    };
    for (const start of [...graph.keys()].sort()) walk(start, start, [start]);
    expect(loops).toEqual([]);
  });

  it('puts every folder of src/ on one side of the HTTP line', () => {
    const units = [...new Set(files.map(unitOf))].sort();
    expect(units.filter((u) => !NO_HTTP.includes(u) && !HTTP_LAYER.includes(u))).toEqual([]);
  });

  it(`keeps ${LEAVES.join(' and ')} leaves: they import no other folder`, () => {
    const graph = unitGraph();
    const outside = (leaf: string) =>
      [...(graph.get(leaf)?.entries() ?? [])]
        .flatMap(([, edges]) => edges.map((e) => path.normalize(path.join(path.dirname(e.file), e.specifier))))
        .filter((target) => !LEAF_MAY_IMPORT.includes(target));
    for (const leaf of LEAVES) expect(outside(leaf), leaf).toEqual([]);
  });

  it(`keeps ${NO_HTTP.join(', ')} free of http/ and Fastify`, () => {
    const offending: string[] = [];
    for (const [file, specs] of imports) {
      if (!NO_HTTP.includes(unitOf(file))) continue;
      for (const s of specs) {
        const http = s.startsWith('.') && unitOf(path.resolve(path.dirname(file), s)) === 'http';
        if (http || s === 'fastify' || s.startsWith('fastify/') || s.startsWith('@fastify/')) {
          offending.push(`${path.relative(SRC, file)} → ${s}`);
        }
      }
    }
    expect(offending).toEqual([]);
  });
});
