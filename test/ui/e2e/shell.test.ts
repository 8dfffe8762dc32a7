import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable } from '../../support/browser.js';
import { closeUi, DESKTOP, expectNoSeriousA11yViolations, openUi, PHONE, shots, signIn } from '../../support/ui/page.js';
import { seedAcmeWithRelay, startUiServer, type UiServer } from '../../support/ui/server.js';

/**
 * Issue 29, the frame around every page and the key rotation form: focus lands on the page after
 * signing in; the server's development mode is a one-line badge whose list of relaxations opens
 * on demand; under 720px the navigation folds behind a Menu button (Escape closes it, a link
 * followed closes it); Rotate opens a form with a 24-hour grace period in hours or days, which
 * says when the old key stops, takes focus, and closes with Escape.
 */
describe.skipIf(!chromiumAvailable('the shell E2E test'))('operator UI: shell, development mode, key rotation', () => {
  let ui: UiServer;
  let page: Page;
  const go = (hash: string) => page.goto(`${ui.baseUrl}/ui/${hash}`);
  const activeId = () => page.evaluate('document.activeElement?.id ?? null');
  const activeName = () =>
    page.evaluate('document.activeElement?.getAttribute("aria-label") ?? document.activeElement?.textContent');

  beforeAll(async () => {
    ui = await startUiServer({ smtp: true });
    await seedAcmeWithRelay(ui);
    page = await openUi(ui.baseUrl, { cleanup: ui.cleanup, viewport: DESKTOP });
    page.setDefaultTimeout(10_000);
  }, 60_000);

  afterAll(async () => {
    if (page !== undefined) await closeUi(page);
    await ui?.stop();
  });

  it('puts focus on the page (main) after signing in, so Tab goes on into it', async () => {
    await signIn(page, ui.baseUrl, ui.token);
    await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor();
    expect(await activeId()).toBe('main');
    await page.keyboard.press('Tab');
    expect(await activeName()).toBe('New organization');
    // A reload with the session's cookie is not a sign-in: focus stays where the browser puts it.
    await page.reload();
    await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor();
    expect(await activeId()).not.toBe('main');
  });

  it('shows development mode as a one-line badge, its relaxations behind it', async () => {
    const badge = page.getByRole('button', { name: 'Development mode' });
    const list = page.locator('#server-mode-list');
    await badge.waitFor();
    expect(await badge.getAttribute('aria-expanded')).toBe('false');
    expect(await list.isVisible()).toBe(false);
    // One line at 0.8rem (15px root): ~22px, where the box with the list was 284px.
    const region = await page.getByRole('region', { name: 'Development mode' }).boundingBox();
    expect(region?.height ?? 999).toBeLessThanOrEqual(30);
    await shots(page, 'shell-dev-mode-closed');
    await badge.click();
    expect(await badge.getAttribute('aria-expanded')).toBe('true');
    await list.getByText('CAPTCHA test secrets are accepted').waitFor();
    expect(await list.textContent()).toContain('webhook URLs may use http and reach loopback');
    await shots(page, 'shell-dev-mode-open');
    await expectNoSeriousA11yViolations(page);
    await badge.click();
    expect(await list.isVisible()).toBe(false);
  });

  it('folds the navigation behind Menu on a phone: Escape closes it, a link followed closes it', async () => {
    await page.setViewportSize(PHONE);
    try {
      await go('#/orgs/acme');
      await page.getByRole('heading', { level: 1 }).waitFor();
      const menu = page.getByRole('button', { name: 'Menu' });
      const nav = page.getByRole('navigation', { name: 'Main' });
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      expect(await nav.getByRole('link', { name: 'Templates' }).isVisible()).toBe(false);
      expect(await page.getByRole('button', { name: 'Development mode' }).isVisible()).toBe(true);
      const top = await page.locator('#main').boundingBox();
      expect(top?.y ?? 999).toBeLessThanOrEqual(60);

      await menu.click();
      expect(await menu.getAttribute('aria-expanded')).toBe('true');
      await nav.getByRole('link', { name: 'Templates' }).waitFor();
      await shots(page, 'shell-menu-open');
      await expectNoSeriousA11yViolations(page);
      await nav.getByRole('link', { name: 'Keys' }).focus();
      await page.keyboard.press('Escape');
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      expect(await activeName()).toBe('Menu');

      await page.keyboard.press('Enter');
      await nav.getByRole('link', { name: 'Templates' }).click();
      await page.getByRole('heading', { name: 'Templates', level: 1 }).waitFor();
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      await expect.poll(activeId).toBe('main');
      // The link to the page already shown closes the menu too, and focus goes to the page.
      await menu.click();
      await nav.getByRole('link', { name: 'Templates' }).click();
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      expect(await activeId()).toBe('main');
    } finally {
      await page.setViewportSize(DESKTOP);
    }
    // At desk width there is no Menu button: the links are always there.
    expect(await page.getByRole('button', { name: 'Menu' }).isVisible()).toBe(false);
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Templates' }).isVisible()).toBe(true);
  });

  it('rotates a key with a 24-hour grace by default, saying when the old key stops; Escape closes the form', async () => {
    const made = await ui.admin('POST', '/organizations/acme/keys', { type: 'private' });
    const id = (made.body as { id: string }).id;
    await go('#/orgs/acme/keys');
    const rotate = page.getByRole('button', { name: `Rotate key ${id}` });
    await rotate.click();
    const form = page.getByRole('form', { name: `Rotate key ${id}` });
    const amount = form.getByLabel('Grace period', { exact: true });
    const unit = form.getByLabel('Grace period unit');
    await amount.waitFor();
    // Focus went into the form, on the grace period.
    expect(await page.evaluate('document.activeElement.labels?.[0]?.textContent')).toBe('Grace period');
    expect(await amount.inputValue()).toBe('24');
    expect(await unit.inputValue()).toBe('hours');
    const stopsAt = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString().slice(0, 13).replace('T', ' ');
    // To the minute: the hour is enough to check (unless the test runs across an hour's turn).
    await form.getByText(new RegExp(`The old key stops working at ${stopsAt(24)}:\\d\\d UTC, 24 hours after`)).waitFor();
    // A change of unit keeps the period: 24 hours become 1 day (never 24 days); then 2 days typed.
    await unit.selectOption('days');
    expect(await amount.inputValue()).toBe('1');
    await form.getByText(new RegExp(`stops working at ${stopsAt(24)}:\\d\\d UTC, 1 day after`)).waitFor();
    await amount.fill('2');
    await form.getByText(new RegExp(`stops working at ${stopsAt(48)}:\\d\\d UTC, 2 days after`)).waitFor();
    await amount.fill('31');
    await form.getByText('a whole number, 0 to 30 days').waitFor();
    expect(await form.getByRole('button', { name: 'Rotate', exact: true }).isDisabled()).toBe(true);
    await amount.fill('0');
    await form.getByText('The old key stops working at once.').waitFor();
    await shots(page, 'key-rotate-form');
    await expectNoSeriousA11yViolations(page);

    await page.keyboard.press('Escape');
    expect(await form.count()).toBe(0);
    expect(await activeName()).toBe(`Rotate key ${id}`);

    // Opened again: the default, 24 hours, is what the server is sent.
    await page.keyboard.press('Enter');
    await amount.waitFor();
    expect(await amount.inputValue()).toBe('24');
    const before = Date.now();
    await form.getByRole('button', { name: 'Rotate', exact: true }).click();
    await page.getByText(`replaces ${id}`).waitFor();
    const keys = await ui.admin('GET', '/organizations/acme/keys');
    const old = (keys.body as { items: Array<{ id: string; status: string; expires_at: string | null }> }).items.find(
      (k) => k.id === id,
    );
    expect(old?.status).toBe('rotated');
    const grace = Date.parse(old?.expires_at ?? '') - before;
    expect(grace).toBeGreaterThan(24 * 3_600_000 - 60_000);
    expect(grace).toBeLessThan(24 * 3_600_000 + 60_000);
    await shots(page, 'key-rotated-24h');
  });
});
