import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orgBody } from '../../support/admin.js';
import { freePort } from '../../support/smtp-sink.js';
import { startProcess } from '../../support/processes.js';
import { tempDir } from '../../support/cleanup.js';
import { programInstalled } from '../../support/programs.js';
import { chromiumAvailable } from '../../support/browser.js';
import { closeUi, openUi, shot, signIn, signOut } from '../../support/ui/page.js';
import { startUiServer, type UiServer } from '../../support/ui/server.js';

// .ci/run installs Caddy: under CI its absence is a failure, never a quiet skip.
const hasCaddy = programInstalled('caddy', true, 'the operator UI behind a path prefix');

/**
 * The operator UI behind a real reverse proxy (Caddy) that mounts mailroom under a path prefix,
 * as the README says it works: `/mail/ui` redirects to `/mail/ui/`, the assets and the admin
 * API are reached under the prefix, and signing in, a state-changing call (cookie + CSRF token +
 * Origin) and signing out all hold there.
 */
describe.skipIf(!hasCaddy || !chromiumAvailable('the operator UI behind a path prefix'))(
  'operator UI under a proxy path prefix',
  () => {
    let ui: UiServer;
    let page: Page;
    let proxy = '';

    beforeAll(async () => {
      const proxyPort = await freePort();
      proxy = `http://127.0.0.1:${proxyPort}`;
      ui = await startUiServer({ worker: false, env: { MAILROOM_BASE_URL: `${proxy}/mail` } });
      const upstream = new URL(ui.baseUrl).host;
      const dir = tempDir(ui.cleanup, 'mailroom-caddy-');
      const config = path.join(dir, 'Caddyfile');
      // handle_path strips /mail before proxying: mailroom itself knows nothing of the prefix.
      fs.writeFileSync(
        config,
        [
          '{',
          '\tadmin off',
          '\tauto_https off',
          `\thttp_port ${proxyPort}`,
          '}',
          `http://:${proxyPort} {`,
          '\thandle_path /mail/* {',
          `\t\treverse_proxy ${upstream}`,
          '\t}',
          '\trespond 404',
          '}',
          '',
        ].join('\n'),
      );
      const caddy = startProcess(
        'caddy',
        ['run', '--config', config, '--adapter', 'caddyfile'],
        {
          HOME: dir,
          XDG_DATA_HOME: path.join(dir, 'data'),
          XDG_CONFIG_HOME: path.join(dir, 'config'),
        },
        ui.cleanup,
        'caddy',
      );
      ui.cleanup.defer(() => {
        caddy.child.kill('SIGTERM');
      });
      await caddy.waitForOutput('serving initial configuration', 20_000);
      expect((await ui.admin('PUT', '/organizations/acme', orgBody({ name: 'acme' }))).status).toBe(201);
      page = await openUi(`${proxy}/mail`, { cleanup: ui.cleanup });
    }, 60_000);

    afterAll(async () => {
      if (page !== undefined) await closeUi(page);
      await ui?.stop();
    });

    it('redirects /mail/ui to /mail/ui/ and loads its assets under the prefix', async () => {
      const assets: string[] = [];
      page.on('request', (r) => {
        if (r.url().includes('/assets/')) assets.push(new URL(r.url()).pathname);
      });
      const answer = await page.goto(`${proxy}/mail/ui`);
      expect(page.url()).toBe(`${proxy}/mail/ui/`);
      expect(answer?.status()).toBe(200);
      await page.getByLabel('Admin token').waitFor();
      expect(assets.length).toBeGreaterThan(0);
      expect(
        assets.every((p) => p.startsWith('/mail/ui/assets/')),
        assets.join(' '),
      ).toBe(true);
    });

    it('signs in, creates a key through the prefixed admin API, and signs out', async () => {
      const api: string[] = [];
      page.on('request', (r) => {
        if (r.url().includes('/admin/v1/')) api.push(new URL(r.url()).pathname);
      });
      await signIn(page, `${proxy}/mail`, ui.token);
      await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor();
      await page.goto(`${proxy}/mail/ui/#/orgs/acme/keys`);
      await page.getByLabel('Type').selectOption('private');
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByText('it will not be shown again').waitFor();
      await shot(page, 'path-prefix-key-created');
      const keys = await ui.admin('GET', '/organizations/acme/keys');
      expect((keys.body as { items: Array<{ type: string }> }).items.map((k) => k.type)).toContain('private');
      await signOut(page);
      expect(await page.context().cookies()).toEqual([]);
      expect(api.length).toBeGreaterThan(0);
      expect(
        api.every((p) => p.startsWith('/mail/admin/v1/')),
        api.join(' '),
      ).toBe(true);
    });
  },
);
