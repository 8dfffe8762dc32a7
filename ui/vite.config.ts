import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The operator UI: built into dist/ui by `npm run build` and served by `mailroom serve` under
// /ui/. `base: './'` makes every asset URL relative, so the UI works behind a proxy that mounts
// mailroom under a path prefix. Hashed file names let the server cache assets for a year.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/ui', import.meta.url)),
    emptyOutDir: true,
    // No inline scripts or styles may appear: the UI's CSP forbids them.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    chunkSizeWarningLimit: 1200,
  },
});
