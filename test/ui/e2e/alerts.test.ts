import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { chromiumAvailable } from '../../support/browser.js';
import { closeUi, DESKTOP, expectNoSeriousA11yViolations, openUi, PHONE, shots, signIn } from '../../support/ui/page.js';
import { sendWith, templateBody } from '../../support/ui/seed.js';
import { seedAcmeWithRelay, startUiServer, type UiServer } from '../../support/ui/server.js';

/**
 * Issue 29, alerts in the operator UI: a relay nobody listens on (connections refused) opens its
 * circuit breaker after 5 failures; the overview shows the firing alert at the top (the
 * service and its last error) and the recent events; the settings page's Alerts card shows a
 * bad threshold's error under its field and saves a good one. axe-checked at both widths, nothing
 * wider than a phone; shots test-output/ui/alerts-*.png.
 */
const KEY = 'sk_alerts_e2e_0123456789';

describe.skipIf(!chromiumAvailable('the alerts E2E test'))('operator UI: alerts', () => {
  let ui: UiServer;
  let page: Page;
  const go = (hash: string) => page.goto(`${ui.baseUrl}/ui/${hash}`);

  const fitsPhone = async () => {
    await page.setViewportSize(PHONE);
    try {
      const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      expect(width).toBeLessThanOrEqual(PHONE.width);
      await expectNoSeriousA11yViolations(page);
    } finally {
      await page.setViewportSize(DESKTOP);
    }
  };

  beforeAll(async () => {
    ui = await startUiServer({ smtp: true });
    // Port 9 on loopback: nothing listens, every connection is refused (a transient failure).
    await seedAcmeWithRelay(ui, { org: { plan: 'pro' }, service: { smtp: { host: '127.0.0.1', port: 9 } } });
    expect((await ui.admin('POST', '/organizations/acme/keys', { type: 'private', key: KEY })).status).toBe(201);
    const template = await ui.admin(
      'PUT',
      '/organizations/acme/templates/order',
      templateBody('ada@example.com', 'Your order', { text: 'Shipped.', html: undefined, from_name: undefined, params: [] }),
    );
    expect(template.status, JSON.stringify(template.body)).toBe(201);
    // The breaker opens at 5 transient failures within 60 s (src/delivery/breaker.ts).
    for (let i = 0; i < 5; i++) await sendWith(ui, KEY, 'order', {});
    await vi.waitFor(
      async () => {
        const events = await ui.admin('GET', '/organizations/acme/alerts/events');
        expect((events.body as { open: unknown[] }).open, ui.output()).toHaveLength(1);
      },
      { timeout: 60_000, interval: 300 },
    );
    page = await openUi(ui.baseUrl, { cleanup: ui.cleanup, viewport: DESKTOP });
    await signIn(page, ui.baseUrl, ui.token);
  }, 120_000);

  afterAll(async () => {
    if (page !== undefined) await closeUi(page);
    await ui?.stop();
  });

  it('the overview shows the firing alert at the top: the service and its last error', async () => {
    await go('#/orgs/acme');
    const card = page.getByRole('region', { name: 'Alerts firing (1)' });
    await card.waitFor();
    const text = (await card.textContent()) ?? '';
    expect(text).toContain('Circuit breaker open');
    expect(text).toContain('service relay');
    expect(text).toContain('ECONNREFUSED');
    await card.getByText('Recent alert events').click();
    expect(await card.locator('.badge', { hasText: 'firing' }).count()).toBe(1);
    await expectNoSeriousA11yViolations(page);
    await shots(page, 'alerts-overview');
    await fitsPhone();
  });

  it("the settings page's Alerts card shows a bad threshold's error under its field, then saves", async () => {
    await go('#/orgs/acme/settings');
    const form = page.getByRole('form', { name: 'Alerts' });
    await form.waitFor();
    const bounce = form.getByLabel('Bounce rate threshold (%)');
    expect(await bounce.inputValue()).toBe('5');
    await bounce.fill('0');
    await form.getByRole('button', { name: 'Save alert settings' }).click();
    await form.locator('.field-error').first().waitFor();
    expect(await bounce.getAttribute('aria-invalid')).toBe('true');
    await expectNoSeriousA11yViolations(page);
    await shots(page, 'alerts-settings-error', 'form[aria-labelledby="alert-settings-h"]');
    await fitsPhone();
    await bounce.fill('3');
    await form.getByLabel('Complaint rate threshold (%)').fill('');
    await form.getByRole('button', { name: 'Save alert settings' }).click();
    await form.getByText('Alert settings saved.').waitFor();
    const saved = await ui.admin('GET', '/organizations/acme/alerts');
    expect(saved.body).toMatchObject({ bounce_rate_percent: 3, complaint_rate_percent: null, min_sample: 100 });
    await shots(page, 'alerts-settings', 'form[aria-labelledby="alert-settings-h"]');
  });
});
