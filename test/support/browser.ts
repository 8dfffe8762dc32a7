import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (never a browser download); MAILROOM_TEST_CHROMIUM names another. */
export const CHROMIUM = process.env.MAILROOM_TEST_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Whether the browser tests can run. Without Chromium they are skipped loudly, except under CI
 * (CI=true), where that is an error: .ci/run installs it.
 */
export function chromiumAvailable(what: string): boolean {
  if (fs.existsSync(CHROMIUM)) return true;
  if (process.env.CI === 'true') throw new Error(`Chromium is required under CI (${CHROMIUM}); .ci/run installs it`);
  console.warn(`\n*** ${CHROMIUM} not found: ${what} is SKIPPED (apt-get install chromium) ***\n`);
  return false;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}
