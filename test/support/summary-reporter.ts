import type { Reporter, TestModule } from 'vitest/node';

/**
 * One plain closing line, `tests: N passed, N failed, N skipped`, that any CI reads the same way
 * whatever the test runner (vitest's own summary is for people).
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const m of testModules) {
      for (const test of m.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
      // A file that failed to load has no tests to count, but it is a failure.
      if (m.state() === 'failed' && [...m.children.allTests()].length === 0) failed += 1;
    }
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
