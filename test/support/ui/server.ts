import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { Closer, tempDir } from '../cleanup.js';
import { freePort, startSink, type Sink, type SinkOptions } from '../smtp-sink.js';
import { requireBuild, ROOT, startCli, type Running } from '../processes.js';
import { orgBody } from '../admin.js';

/**
 * The operator UI's end-to-end harness: a real `mailroom serve` from dist/ (so `npm run build`
 * first: it builds the server and dist/ui); ./page.ts drives Debian's Chromium over it
 * (playwright-core): the sign-in steps, screenshots under test-output/ui/, and axe-core.
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

/** The admin token every UI server starts with (MAILROOM_ADMIN_TOKEN: 32 characters or more). */
export const ADMIN_TOKEN = 'ui-e2e-admin-token-0123456789abcdef';

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
  cleanup: Closer;
}

export async function startUiServer(opts: UiServerOptions = {}): Promise<UiServer> {
  requireBuild();
  if (!fs.existsSync(path.join(ROOT, 'dist/ui/index.html')))
    throw new Error('dist/ui/index.html is missing: run `npm run build` first');
  const c = new Closer();
  try {
    const dataDir = tempDir(c, 'mailroom-ui-e2e-');
    let smtp: Sink | undefined;
    if (opts.smtp !== undefined && opts.smtp !== false) {
      const sink = await startSink(opts.smtp === true ? {} : opts.smtp);
      c.defer(() => sink.close());
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
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
    };
    return {
      baseUrl,
      token,
      dataDir,
      process: running,
      output: running.output,
      admin,
      cleanup: c,
      stop: () => c.closeAll(),
      ...(smtp === undefined ? {} : { smtp }),
    };
  } catch (err) {
    await c.closeAll();
    throw err;
  }
}

/**
 * Organization `acme` (100 credits) with its default SMTP service `relay` pointed at the
 * harness's loopback sink (start the server with `smtp: true`): what most flows start from.
 * `org` adds to or replaces the organization's settings (plan, credits…), `service` the relay's.
 */
export async function seedAcmeWithRelay(
  ui: UiServer,
  overrides: { org?: Record<string, unknown>; service?: Record<string, unknown> } = {},
): Promise<void> {
  const org = await ui.admin('PUT', '/organizations/acme', orgBody({ name: 'Acme', credits: 100, ...overrides.org }));
  expect(org.status, JSON.stringify(org.body)).toBe(201);
  const service = await ui.admin('PUT', '/organizations/acme/services/relay', {
    provider: 'smtp',
    default: true,
    from_email: 'noreply@example.com',
    from_name: 'Acme',
    smtp: { host: '127.0.0.1', port: ui.smtp?.port },
    ...overrides.service,
  });
  expect(service.status, JSON.stringify(service.body)).toBe(201);
}
