import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';
import { cleanup, type Cleanup, freePort, requireBuild, ROOT, startCli, tempDir, type Running } from '../../cli/processes.js';
import { orgBody } from '../../support/admin.js';
import { launchChromium } from '../../support/browser.js';
import { startSink, type Sink, type SinkOptions } from '../../support/smtp-sink.js';

/**
 * The operator UI's end-to-end harness: a real `mailroom serve` from dist/ (so `npm run build`
 * first: it builds the server and dist/ui), Debian's Chromium driven by playwright-core, the
 * sign-in steps, screenshots under test-output/ui/, and axe-core run inside the page.
 *
 *   const ui = await startUiServer({ smtp: true });
 *   const page = await openUi(ui.baseUrl);
 *   await signIn(page, ui.baseUrl, ui.token);
 *   await shot(page, 'organizations');
 *   await expectNoSeriousA11yViolations(page);
 *   await closeUi(page); await ui.stop();
 *
 * Wrap a describe in `describe.skipIf(!chromiumAvailable('…'))` (test/support/browser.ts).
 */

export { chromiumAvailable } from '../../support/browser.js';

/** The admin token every UI server starts with (MAILROOM_ADMIN_TOKEN: 32 characters or more). */
export const ADMIN_TOKEN = 'ui-e2e-admin-token-0123456789abcdef';

export const SHOT_DIR = path.join(ROOT, 'test-output/ui');
const AXE_SOURCE = path.join(ROOT, 'node_modules/axe-core/axe.min.js');

export interface UiServerOptions {
  /** YAML written to a file and passed as MAILROOM_CONFIG (the declarative configuration). */
  config?: string;
  /** More environment for `mailroom serve` (wins over the harness's own values). */
  env?: Record<string, string>;
  /** Start a loopback SMTP sink (test/support/smtp-sink.ts); its port is `smtp.port`. */
  smtp?: boolean | SinkOptions;
  /** Run the delivery worker in the serve process (default true: a send reaches the sink). */
  worker?: boolean;
}

export interface AdminReply {
  status: number;
  headers: Headers;
  /** Parsed JSON (undefined for an empty body such as a 204). */
  body: unknown;
}

export interface UiServer {
  /** `http://127.0.0.1:<port>` (also MAILROOM_BASE_URL); the UI is at `${baseUrl}/ui/`. */
  baseUrl: string;
  token: string;
  dataDir: string;
  smtp?: Sink;
  process: Running;
  /** Everything serve printed so far (put it in assertion messages). */
  output(): string;
  /** Calls the admin API with the bearer token: for seeding and checking behind the UI's back. */
  admin(method: string, apiPath: string, body?: unknown): Promise<AdminReply>;
  /** Stops serve, the sink and removes the temp dir (also every browser opened with this server's cleanup). */
  stop(): Promise<void>;
  /** The cleanup the server's parts are registered with: add your own to it. */
  cleanup: Cleanup;
}

export async function startUiServer(opts: UiServerOptions = {}): Promise<UiServer> {
  requireBuild();
  if (!fs.existsSync(path.join(ROOT, 'dist/ui/index.html'))) throw new Error('dist/ui/index.html is missing: run `npm run build` first');
  const c = cleanup();
  try {
    const dataDir = tempDir(c, 'mailroom-ui-e2e-');
    let smtp: Sink | undefined;
    if (opts.smtp !== undefined && opts.smtp !== false) {
      const sink = await startSink(opts.smtp === true ? {} : opts.smtp);
      c.add(() => sink.close());
      smtp = sink;
    }
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const env: Record<string, string> = {
      HOME: dataDir,
      MAILROOM_DATA_DIR: dataDir,
      MAILROOM_PORT: String(port),
      MAILROOM_HOST: '127.0.0.1',
      MAILROOM_BASE_URL: baseUrl,
      MAILROOM_ADMIN_TOKEN: ADMIN_TOKEN,
      MAILROOM_LOG_LEVEL: 'warn',
      MAILROOM_WORKER: opts.worker === false ? 'off' : 'on',
      MAILROOM_WORKER_POLL_MS: '100',
    };
    if (opts.config !== undefined) {
      const file = path.join(dataDir, 'mailroom.yaml');
      fs.writeFileSync(file, opts.config);
      env.MAILROOM_CONFIG = file;
    }
    const token = opts.env?.MAILROOM_ADMIN_TOKEN ?? ADMIN_TOKEN;
    const running = startCli(['serve'], { ...env, ...opts.env }, c);
    await running.waitForOutput('listening on', 30_000);
    const admin = async (method: string, apiPath: string, body?: unknown): Promise<AdminReply> => {
      const headers: Record<string, string> = { authorization: `Bearer ${token}` };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${baseUrl}/admin/v1${apiPath}`, {
        method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) as unknown };
    };
    return {
      baseUrl, token, dataDir, process: running, output: running.output, admin, cleanup: c,
      stop: () => c.run(),
      ...(smtp === undefined ? {} : { smtp }),
    };
  } catch (err) {
    await c.run();
    throw err;
  }
}

const browsers = new WeakMap<Page, Browser>();

export interface OpenUiOptions {
  /** Where to go under /ui/ (a hash route such as `#/orgs/acme/templates`); default the start page. */
  hash?: string;
  viewport?: { width: number; height: number };
  /** Close the browser with this cleanup too (e.g. the UiServer's). */
  cleanup?: Cleanup;
}

/**
 * Launches Chromium (one browser per call: tests stay independent) and opens `${baseUrl}/ui/`.
 * The page keeps the UI's real CSP (no bypassCSP): a CSP violation would break the page here as
 * it would for an operator. Console errors and page errors are printed to help a failing test.
 */
export async function openUi(baseUrl: string, opts: OpenUiOptions = {}): Promise<Page> {
  const browser = await launchChromium();
  opts.cleanup?.add(() => browser.close());
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
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
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
  const violations = await page.evaluate(`window.axe.run(${context}, { resultTypes: ['violations'] }).then((r) => r.violations)`) as AxeViolation[];
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  const report = serious.map((v) => `${v.impact ?? '?'} ${v.id}: ${v.help}\n${v.nodes.map((n) => `    at ${JSON.stringify(n.target)} ${n.failureSummary ?? ''}`).join('\n')}`).join('\n');
  expect(serious, `axe found serious/critical violations on ${page.url()}:\n${report}`).toEqual([]);
}

/**
 * Organization `acme` (100 credits) with its default SMTP service `relay` pointed at the
 * harness's loopback sink (start the server with `smtp: true`): what most flows start from.
 */
export async function seedAcmeWithRelay(ui: UiServer): Promise<void> {
  const org = await ui.admin('PUT', '/organizations/acme', orgBody({ name: 'Acme', credits: 100 }));
  expect(org.status, JSON.stringify(org.body)).toBe(201);
  const service = await ui.admin('PUT', '/organizations/acme/services/relay', {
    provider: 'smtp', default: true, from_email: 'noreply@example.com', from_name: 'Acme',
    smtp: { host: '127.0.0.1', port: ui.smtp?.port },
  });
  expect(service.status, JSON.stringify(service.body)).toBe(201);
}
