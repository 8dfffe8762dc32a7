#!/usr/bin/env -S node --max-semi-space-size=4 --max-old-space-size=1024
// Thin launcher: the compiled CLI lives in dist/ (built by `npm run build`, run by `prepare` on install).
import { main } from '../dist/src/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => { if (typeof code === 'number') process.exitCode = code; },
  (err) => { console.error(err instanceof Error ? err.message : err); process.exitCode = 1; },
);
