import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable } from '../../support/browser.js';
import { closeUi, DESKTOP, expectNoSeriousA11yViolations, openUi, shots, signIn } from '../../support/ui/page.js';
import { startUiServer, type UiServer } from '../../support/ui/server.js';

/**
 * Issue 29: a new organization created in the UI defaults to credits `unlimited` on the least
 * limiting plan (a visible choice), and the settings, overview and list say "Unlimited" instead
 * of a balance, with no top-up; choosing Metered brings the balance and Top up back.
 */
describe.skipIf(!chromiumAvailable('the credits unlimited E2E test'))('operator UI: credits unlimited', () => {
  let ui: UiServer;
  let page: Page;

  beforeAll(async () => {
    ui = await startUiServer();
    page = await openUi(ui.baseUrl, { cleanup: ui.cleanup, viewport: DESKTOP });
    page.setDefaultTimeout(10_000);
    await signIn(page, ui.baseUrl, ui.token);
  }, 60_000);

  afterAll(async () => {
    if (page !== undefined) await closeUi(page);
    await ui?.stop();
  });

  const go = async (hash: string) => {
    await page.goto(`${ui.baseUrl}/ui/${hash}`);
  };
  const credits = () => page.getByRole('combobox', { name: 'Credits', exact: true });

  it('the New organization form starts unlimited on business_200k, without starting credits', async () => {
    await go('#/orgs/new');
    await page.getByRole('heading', { name: 'New organization' }).waitFor();
    expect(await credits().inputValue()).toBe('unlimited');
    expect(await page.getByLabel('Plan').inputValue()).toBe('business_200k');
    expect(await page.getByLabel('Starting credits').count()).toBe(0);
    expect(await page.getByLabel('When credits run out').count()).toBe(0);
    await page.getByText('Sends take no credit and are never held or refused for one').waitFor();
    await shots(page, 'org-new-unlimited');
    await expectNoSeriousA11yViolations(page);
    // The choice is the operator's: Metered shows the spec's settings again.
    await credits().selectOption('metered');
    await page.getByLabel('Starting credits').waitFor();
    await page.getByLabel('When credits run out').waitFor();
    await credits().selectOption('unlimited');

    await page.getByLabel('Id', { exact: true }).fill('selfhost');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Settings of selfhost' }).waitFor();
    const created = await ui.admin('GET', '/organizations/selfhost');
    expect(created.body).toMatchObject({ credits: 'unlimited', plan: 'business_200k', held: 0 });
  }, 60_000);

  it('settings, overview and list say Unlimited, with no top-up', async () => {
    const card = page.getByRole('region', { name: 'Credits', exact: true });
    await card.getByText('Unlimited').waitFor();
    expect(await page.getByRole('button', { name: 'Top up' }).count()).toBe(0);
    expect(await page.getByLabel('Credits to add').count()).toBe(0);
    await shots(page, 'org-settings-unlimited');
    await expectNoSeriousA11yViolations(page);

    await go('#/orgs/selfhost');
    await page.getByRole('heading', { name: 'Overview of selfhost' }).waitFor();
    const overviewCard = page.getByRole('region', { name: 'Credits left' });
    await overviewCard.getByText('Unlimited').waitFor();
    expect(await overviewCard.getByRole('link', { name: 'Top up' }).count()).toBe(0);
    await shots(page, 'overview-unlimited');
    await expectNoSeriousA11yViolations(page);

    await go('#/orgs');
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'selfhost', exact: true }) });
    await row.getByText('Unlimited').waitFor();
  }, 60_000);

  it('Metered, saved, brings the balance and Top up back', async () => {
    await go('#/orgs/selfhost/settings');
    await page.getByRole('heading', { name: 'Settings of selfhost' }).waitFor();
    await credits().selectOption('metered');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText(/^Saved at/).waitFor();
    expect((await ui.admin('GET', '/organizations/selfhost')).body).toMatchObject({ credits: 0 });
    await page.getByRole('button', { name: 'Top up' }).waitFor();
    await page.getByText('credits left').waitFor();
  }, 60_000);
});
