import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';
import { launchChromium } from '../browser.js';
import type { Closer } from '../cleanup.js';
import { ROOT } from '../processes.js';

/**
 * The operator UI in Debian's Chromium (playwright-core), over a server from ./server.ts: opening
 * it, the sign-in steps, screenshots under test-output/ui/, and axe-core run inside the page.
 */

export const SHOT_DIR = path.join(ROOT, 'test-output/ui');
const AXE_SOURCE = path.join(ROOT, 'node_modules/axe-core/axe.min.js');

const browsers = new WeakMap<Page, Browser>();

export interface OpenUiOptions {
  /** Where to go under /ui/ (a hash route such as `#/orgs/acme/templates`); default the start page. */
  hash?: string;
  viewport?: { width: number; height: number };
  /** Close the browser with this cleanup too (e.g. the UiServer's). */
  cleanup?: Closer;
}

/**
 * Launches Chromium (one browser per call: tests stay independent) and opens `${baseUrl}/ui/`.
 * The page keeps the UI's real CSP (no bypassCSP): a CSP violation would break the page here as
 * it would for an operator. Console errors and page errors are printed to help a failing test.
 */
export async function openUi(baseUrl: string, opts: OpenUiOptions = {}): Promise<Page> {
  const browser = await launchChromium();
  opts.cleanup?.defer(() => browser.close());
  const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1280, height: 860 } });
  const page = await context.newPage();
  browsers.set(page, browser);
  page.on('pageerror', (err) => console.warn(`[ui page error] ${err.message}`));
  page.on('console', (msg) => {
    // A 4xx the test provoked logs "Failed to load resource" too: only other errors (a CSP
    // refusal, an exception) are worth printing.
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) console.warn(`[ui console] ${msg.text()}`);
  });
  await page.goto(`${baseUrl}/ui/${opts.hash ?? ''}`);
  return page;
}

/** Closes the browser openUi launched for `page` (safe to call twice). */
export async function closeUi(page: Page): Promise<void> {
  const browser = browsers.get(page);
  browsers.delete(page);
  await browser?.close();
}

/** Fills the sign-in form with `token` and submits it; waits until the signed-in frame shows. */
export async function signIn(page: Page, baseUrl: string, token: string): Promise<void> {
  if (!page.url().startsWith(`${baseUrl}/ui/`)) await page.goto(`${baseUrl}/ui/`);
  await submitToken(page, token);
  // Attached, not visible: under 720px it is behind the Menu button.
  await page.getByRole('button', { name: 'Sign out', includeHidden: true }).waitFor({ state: 'attached' });
}

/** Fills and submits the sign-in form without waiting for the result (for a wrong token). */
export async function submitToken(page: Page, token: string): Promise<void> {
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Clicks "Sign out" and waits for the sign-in form. */
export async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('Admin token').waitFor();
}

/** Saves a full-page PNG as test-output/ui/<name>.png and returns its path. */
export async function shot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SHOT_DIR, { recursive: true });
  const file = path.join(SHOT_DIR, `${name.replace(/[^\w.-]+/g, '-')}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[]; failureSummary?: string }>;
}

/**
 * Runs axe-core in the page and fails on any serious or critical violation. axe is evaluated
 * through the DevTools protocol (page.evaluate), which the page's CSP does not govern, so the UI
 * keeps its real `script-src 'self'` while being checked. `exclude` takes CSS selectors to skip
 * (e.g. a third-party widget), and should rarely be needed.
 */
export async function expectNoSeriousA11yViolations(page: Page, exclude: string[] = []): Promise<void> {
  const hasAxe = await page.evaluate('typeof window.axe !== "undefined"');
  if (hasAxe !== true) await page.evaluate(fs.readFileSync(AXE_SOURCE, 'utf8'));
  // A string, not a function: the tests' TypeScript has no DOM types. Runs in the page.
  const context = exclude.length === 0 ? 'document' : JSON.stringify({ exclude: exclude.map((s) => [s]) });
  const violations = (await page.evaluate(
    `window.axe.run(${context}, { resultTypes: ['violations'] }).then((r) => r.violations)`,
  )) as AxeViolation[];
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  const report = serious
    .map(
      (v) =>
        `${v.impact ?? '?'} ${v.id}: ${v.help}\n` +
        v.nodes.map((n) => `    at ${JSON.stringify(n.target)} ${n.failureSummary ?? ''}`).join('\n'),
    )
    .join('\n');
  expect(serious, `axe found serious/critical violations on ${page.url()}:\n${report}`).toEqual([]);
}

/** The two viewports screens are looked at in: a laptop's and a phone's (iPhone 12–15 in CSS pixels). */
export const DESKTOP = { width: 1440, height: 900 } as const;
export const PHONE = { width: 390, height: 844 } as const;

/**
 * Saves the screen at DESKTOP as test-output/ui/<name>.png and at PHONE as <name>-phone.png, then
 * puts the page's viewport back. A frame (an email's sandboxed HTML) is painted only once in view:
 * name it in `scrollTo` to have it scrolled into view first at each size.
 */
export async function shots(page: Page, name: string, scrollTo?: string): Promise<[string, string]> {
  const before = page.viewportSize();
  const take = async (size: { width: number; height: number }, file: string) => {
    await page.setViewportSize(size);
    if (scrollTo !== undefined) await page.locator(scrollTo).first().scrollIntoViewIfNeeded();
    return shot(page, file);
  };
  try {
    return [await take(DESKTOP, name), await take(PHONE, `${name}-phone`)];
  } finally {
    if (before !== null) await page.setViewportSize(before);
  }
}
