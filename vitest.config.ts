import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    // Migrates once per run; fresh stores start from a copy (test/support/store-templates.ts).
    globalSetup: ['./test/support/store-templates.ts'],
    // Two cores here: two files at once keeps SQLite, PostgreSQL and the SMTP sinks busy
    // without starving the servers under test.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
