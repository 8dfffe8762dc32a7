import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable } from '../../support/browser.js';
import { ROOT } from '../../support/processes.js';
import { closeUi, DESKTOP, expectNoSeriousA11yViolations, openUi, PHONE, shot, signIn } from '../../support/ui/page.js';
import { type EveryScreen, seedEveryScreen } from '../../support/ui/seed.js';
import { startUiServer, type UiServer } from '../../support/ui/server.js';

/**
 * Issue 29, "phone width": at 390px every page overflowed sideways (scroll width 450–831px). Every
 * route of ui/src/routes.ts is visited at 390×844 over an organization with something on every
 * screen (test/support/ui/seed.ts), and each must fit: no horizontal scroll of the page, none
 * inside a table either (a table too wide is shown as a list), the page starting near the top
 * (the navigation folded behind its Menu button). axe checks each page; each is saved as
 * test-output/ui/phone-<route>.png, and the shell at 1440×900 as shell-desktop-*.png.
 */

/** The routes as ui/src/routes.ts declares them: a route added there without a visit here fails. */
function declaredRoutes(): string[] {
  const source = fs.readFileSync(path.join(ROOT, 'ui/src/routes.ts'), 'utf8');
  return [...source.matchAll(/^\s*\['(\/[^']*)',\s*\w+,/gm)].map((m) => m[1] as string);
}

/** The pages looked at for each route (`#/…`), given the seeded ids: a form and a record where there are both. */
const VISITS: Record<string, (s: EveryScreen) => string[]> = {
  '/': () => ['#/'],
  '/orgs': () => ['#/orgs'],
  '/orgs/new': () => ['#/orgs/new'],
  '/orgs/:org': (s) => [`#/orgs/${s.org}`],
  '/orgs/:org/settings': (s) => [`#/orgs/${s.org}/settings`],
  '/orgs/:org/keys': (s) => [`#/orgs/${s.org}/keys`],
  '/orgs/:org/services': (s) => [`#/orgs/${s.org}/services`],
  '/orgs/:org/services/:id': (s) => [`#/orgs/${s.org}/services/relay`, `#/orgs/${s.org}/services/new`],
  '/orgs/:org/templates': (s) => [`#/orgs/${s.org}/templates`],
  '/orgs/:org/templates/:id': (s) => [`#/orgs/${s.org}/templates/long`, `#/orgs/${s.org}/templates/new`],
  '/orgs/:org/messages': (s) => [`#/orgs/${s.org}/messages`, `#/orgs/${s.org}/messages?mode=test`],
  '/orgs/:org/messages/:id': (s) => [
    `#/orgs/${s.org}/messages/${s.long}`,
    `#/orgs/${s.org}/messages/${s.held}`,
    `#/orgs/${s.org}/messages/${s.long}?tab=headers`,
    `#/orgs/${s.org}/messages/${s.long}?tab=raw`,
  ],
  '/orgs/:org/test-inbox': (s) => [`#/orgs/${s.org}/test-inbox`],
  '/orgs/:org/test-inbox/:id': (s) => [`#/orgs/${s.org}/test-inbox/${s.captured}`],
  '/orgs/:org/request-log': (s) => [`#/orgs/${s.org}/request-log`],
  '/orgs/:org/suppressions': (s) => [`#/orgs/${s.org}/suppressions`, `#/orgs/${s.org}/suppressions?list=block`],
  '/orgs/:org/webhooks': (s) => [`#/orgs/${s.org}/webhooks`],
  '/orgs/:org/webhooks/:id': (s) => [`#/orgs/${s.org}/webhooks/${s.webhook}`],
  '/orgs/:org/webhooks/:id/deliveries/:delivery': (s) => [`#/orgs/${s.org}/webhooks/${s.webhook}/deliveries/${s.delivery}`],
};

/** What a phone shows of a page: its widths, where it starts, and what sticks out (to fix it). */
interface Fit {
  scrollWidth: number;
  mainTop: number;
  /** Tables that scroll sideways inside their box (`.table-wrap`), by caption. */
  scrollingTables: string[];
  /** Up to 8 elements whose right edge is past the viewport, as `tag.class (right px)`. */
  outside: string[];
  /** Labels of list cells with less left padding than their label's width. */
  hiddenLabels: string[];
}

// A string, not a function: the tests' TypeScript has no DOM types. Runs in the page.
const MEASURE = `(() => {
  const classes = (el) =>
    el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).join('.') : '';
  const describe = (el) => el.tagName.toLowerCase() + classes(el);
  const outside = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    const out = r.width > 0 && r.right > innerWidth + 0.5 && !el.closest('.visually-hidden');
    if (out) outside.push(describe(el) + ' (' + Math.round(r.right) + ')');
    if (outside.length >= 8) break;
  }
  // Text wider than its box (an address with no break) sticks out of a box that fits.
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let n = walker.nextNode(); n !== null && outside.length < 8; n = walker.nextNode()) {
    range.selectNodeContents(n);
    const r = range.getBoundingClientRect();
    if (r.width > 0 && r.right > innerWidth + 0.5 && !n.parentElement.closest('.visually-hidden'))
      outside.push('text in ' + describe(n.parentElement) + ' (' + Math.round(r.right) + '): ' + n.textContent.slice(0, 40));
  }
  return {
    scrollWidth: document.documentElement.scrollWidth,
    mainTop: Math.round(document.getElementById('main').getBoundingClientRect().top + scrollY),
    scrollingTables: [...document.querySelectorAll('main .table-wrap')]
      .filter((w) => w.scrollWidth > w.clientWidth + 1)
      .map((w) => w.querySelector('caption')?.textContent ?? '(no caption)'),
    outside,
    // A table shown as a list: a cell's label must fit in its left padding (a table's own padding
    // rule winning over the list's would put the label out of sight, left of the page).
    hiddenLabels: [...document.querySelectorAll('main .table-list td[data-label]:not([data-label=""])')]
      .filter((td) => parseFloat(getComputedStyle(td).paddingLeft) < parseFloat(getComputedStyle(td, '::before').width))
      .map((td) => td.dataset.label),
  };
})()`;

/** The page has drawn its data: a heading, nothing loading, the template editor's chunk in. */
async function settle(page: Page): Promise<void> {
  await page.locator('main h1').first().waitFor();
  await page.locator('main .loading').first().waitFor({ state: 'detached' });
  // Every sandboxed HTML part has loaded and shows something: a shot taken earlier shows a blank
  // box, and would hide a preview that really stays blank (review C, S14).
  for (const handle of await page.locator('main iframe').elementHandles()) {
    const frame = await handle.contentFrame();
    expect(frame, 'an iframe without its frame').not.toBeNull();
    await frame?.waitForLoadState('load');
    await expect.poll(async () => (await frame?.locator('body').textContent())?.trim() ?? '', { timeout: 10_000 }).not.toBe('');
  }
  // One more frame: a table's labels and a chart's size are set after the data's render.
  await page.evaluate('new Promise((r) => requestAnimationFrame(() => r(undefined)))');
}

const fileName = (hash: string) =>
  hash
    .replace(/^#\/?/, '')
    .replace(/(msg|whd|wh)_[\w-]+/g, '$1')
    .replace(/[^\w]+/g, '-') || 'home';

describe.skipIf(!chromiumAvailable('the phone width E2E test'))('operator UI at phone width (390×844)', () => {
  let ui: UiServer;
  let page: Page;
  let seeded: EveryScreen;

  beforeAll(async () => {
    ui = await startUiServer({ smtp: true });
    seeded = await seedEveryScreen(ui);
    page = await openUi(ui.baseUrl, { cleanup: ui.cleanup, viewport: PHONE });
    page.setDefaultTimeout(10_000);
    page.on('dialog', (d) => void d.accept());
    await signIn(page, ui.baseUrl, ui.token);
  }, 120_000);

  afterAll(async () => {
    if (page !== undefined) await closeUi(page);
    await ui?.stop();
  });

  it('has a visit for every route in ui/src/routes.ts', () => {
    const routes = declaredRoutes();
    expect(routes.length).toBeGreaterThan(10);
    expect(Object.keys(VISITS).sort()).toEqual([...routes].sort());
  });

  for (const pattern of declaredRoutes()) {
    it(`fits 390px: ${pattern}`, async () => {
      const visit = VISITS[pattern];
      if (visit === undefined) throw new Error(`no visit for ${pattern}: add one to VISITS`);
      const hashes = visit(seeded);
      for (const hash of hashes) {
        await page.goto(`${ui.baseUrl}/ui/${hash}`);
        await settle(page);
        const fit = (await page.evaluate(MEASURE)) as Fit;
        const at = `${hash}: ${JSON.stringify(fit)}`;
        expect(fit.scrollWidth, at).toBeLessThanOrEqual(PHONE.width);
        expect(fit.scrollingTables, at).toEqual([]);
        expect(fit.hiddenLabels, at).toEqual([]);
        // The bar (brand, mode, Menu) is 46px; the navigation above the page pushed it 277–386px down.
        expect(fit.mainTop, at).toBeLessThanOrEqual(60);
        await shot(page, `phone-${fileName(hash)}${hashes.indexOf(hash) > 0 ? `-${hashes.indexOf(hash) + 1}` : ''}`);
        await expectNoSeriousA11yViolations(page);
      }
    }, 60_000);
  }

  it('keeps the tables tables for screen readers while they are shown as lists', async () => {
    await page.goto(`${ui.baseUrl}/ui/#/orgs/${seeded.org}/keys`);
    await settle(page);
    const keys = page.getByRole('table', { name: 'Keys' });
    expect(await keys.getByRole('columnheader').count()).toBe(10);
    const cell = keys.getByRole('cell').filter({ hasText: 'private' }).first();
    expect(await cell.getAttribute('data-label')).toBe('Type');
    // Shown as a list: the header row is out of sight, the label before each value.
    expect(
      await keys
        .locator('thead')
        .boundingBox()
        .then((b) => b?.height ?? 0),
    ).toBeLessThanOrEqual(1);
    const before = await page.evaluate(
      `getComputedStyle(document.querySelector('main td[data-label="Type"]'), '::before').content`,
    );
    expect(before).toContain('Type');
  });

  it('shows the shell at desk width: the sidebar with every link, no Menu button', async () => {
    await page.setViewportSize(DESKTOP);
    try {
      for (const hash of [`#/orgs/${seeded.org}`, `#/orgs/${seeded.org}/messages`, `#/orgs/${seeded.org}/keys`]) {
        await page.goto(`${ui.baseUrl}/ui/${hash}`);
        await settle(page);
        expect(await page.getByRole('button', { name: 'Menu' }).isVisible()).toBe(false);
        expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).isVisible()).toBe(
          true,
        );
        const fit = (await page.evaluate(MEASURE)) as Fit;
        expect(fit.scrollWidth, `${hash}: ${JSON.stringify(fit)}`).toBeLessThanOrEqual(DESKTOP.width);
        await shot(page, `shell-desktop-${fileName(hash)}`);
        await expectNoSeriousA11yViolations(page);
      }
    } finally {
      await page.setViewportSize(PHONE);
    }
  });
});
