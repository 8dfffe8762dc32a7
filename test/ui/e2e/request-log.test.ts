import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { chromiumAvailable } from '../../support/browser.js';
import { closeUi, DESKTOP, expectNoSeriousA11yViolations, openUi, PHONE, shots, signIn } from '../../support/ui/page.js';
import { templateBody } from '../../support/ui/seed.js';
import { seedAcmeWithRelay, startUiServer, type UiServer } from '../../support/ui/server.js';

/**
 * Issue 29, the request log in the operator UI: a send refused with 422 invalid_template_params,
 * one with 451 recipient_suppressed and one with 404 are listed newest first, their codes in
 * words, each row's fields opening as JSON text; the status filter lives in the link. At 390 px the
 * table is a list and nothing sticks out. axe-checked; shots test-output/ui/request-log*.png.
 */
const KEY = 'sk_request_log_e2e_0123456789';

describe.skipIf(!chromiumAvailable('the request log E2E test'))('operator UI: request log', () => {
  let ui: UiServer;
  let page: Page;
  const go = (hash: string) => page.goto(`${ui.baseUrl}/ui/${hash}`);
  const send = (body: Record<string, unknown>) =>
    fetch(`${ui.baseUrl}/v1/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'user-agent': 'shop-backend/2.3' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    ui = await startUiServer({ smtp: true });
    await seedAcmeWithRelay(ui);
    expect((await ui.admin('POST', '/organizations/acme/keys', { type: 'private', key: KEY })).status).toBe(201);
    const template = await ui.admin('PUT', '/organizations/acme/templates/order', templateBody('ada@example.com', 'Your order'));
    expect(template.status, JSON.stringify(template.body)).toBe(201);
    expect((await send({ template_id: 'missing', template_params: {} })).status).toBe(404);
    expect((await send({ template_id: 'order', template_params: { name: 42, note: 'a private note' } })).status).toBe(422);
    expect((await ui.admin('POST', '/organizations/acme/suppressions', { email: 'ada@example.com' })).status).toBe(201);
    // The Free plan takes 2 requests a second: the third waits for the next second.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await send({ template_id: 'order', template_params: { name: 'Ada' } })).status).toBe(451);
    // Written within a second (the recorder's batches).
    await vi.waitFor(
      async () => {
        const log = await ui.admin('GET', '/organizations/acme/request-log');
        expect((log.body as { items: unknown[] }).items).toHaveLength(3);
      },
      { timeout: 10_000, interval: 200 },
    );
    page = await openUi(ui.baseUrl, { cleanup: ui.cleanup, viewport: DESKTOP });
    await signIn(page, ui.baseUrl, ui.token);
  }, 120_000);

  afterAll(async () => {
    if (page !== undefined) await closeUi(page);
    await ui?.stop();
  });

  it('lists the refusals newest first with their codes in words; a row opens its fields as text', async () => {
    await go('#/orgs/acme');
    await page.getByRole('link', { name: 'Request log' }).first().click();
    await page.waitForURL(/#\/orgs\/acme\/request-log$/);
    const rows = page.getByRole('table', { name: 'Refused requests, newest first' }).locator('tbody tr.request-row');
    const folds = page.getByRole('table', { name: 'Refused requests, newest first' }).locator('tbody tr.request-fields-row');
    await vi.waitFor(async () => expect(await rows.count()).toBe(3), { timeout: 10_000 });
    expect(await rows.nth(0).textContent()).toContain('Recipient suppressed');
    expect(await rows.nth(1).textContent()).toContain('Template parameters do not match');
    expect(await rows.nth(2).textContent()).toContain('Template not found');
    await folds.nth(1).locator('summary').click();
    const pre = folds.nth(1).locator('pre');
    const text = (await pre.textContent()) ?? '';
    expect(JSON.parse(text)).toMatchObject({ template_id: 'order', template_params: { name: 'number', note: 'string(14)' } });
    expect(text).not.toContain('a private note');
    expect(await page.locator('body').textContent()).not.toContain(KEY);
    await shots(page, 'request-log');
    await expectNoSeriousA11yViolations(page);
  });

  it('filters by status through the link, and fits a phone', async () => {
    await go('#/orgs/acme/request-log?status=451');
    const rows = page.getByRole('table', { name: 'Refused requests, newest first' }).locator('tbody tr.request-row');
    const folds = page.getByRole('table', { name: 'Refused requests, newest first' }).locator('tbody tr.request-fields-row');
    await vi.waitFor(async () => expect(await rows.count()).toBe(1), { timeout: 10_000 });
    expect(await rows.first().textContent()).toContain('recipient_suppressed');
    await folds.first().locator('summary').click();
    await shots(page, 'request-log-filtered');
    await page.setViewportSize(PHONE);
    try {
      await go('#/orgs/acme/request-log');
      await vi.waitFor(async () => expect(await rows.count()).toBe(3), { timeout: 10_000 });
      for (let i = 0; i < 3; i++) await folds.nth(i).locator('summary').click();
      const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      expect(width).toBeLessThanOrEqual(PHONE.width);
      await expectNoSeriousA11yViolations(page);
      await shots(page, 'request-log-open');
    } finally {
      await page.setViewportSize(DESKTOP);
    }
  });
});
