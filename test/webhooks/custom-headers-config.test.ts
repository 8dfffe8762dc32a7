import { expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/apply.js';
import { main } from '../../src/cli/main.js';
import { ConfigError } from '../../src/config/env.js';
import { parseConfigText } from '../../src/resources/config-file.js';
import { describeDialects, freshStoreEach } from '../support/dialects.js';
import { freshDatabase } from '../support/stores.js';
import { seedOrg } from '../support/seed.js';
import { openTestStore } from '../support/stores.js';
import { systemClock } from '../../src/domain/clock.js';

/** Custom webhook headers in the config file (a map or a list, ${VAR} for the secret) and on the CLI (--header). */

const DEV = { urlPolicy: { production: false, allowPrivate: false }, secretGraceMs: 3_600_000 };

function yaml(headers: string): string {
  return `
organizations:
  - id: acme
    webhooks:
      - id: crm
        url: http://127.0.0.1:4000/hooks
${headers}
`;
}

const MAP = `        headers:
          Authorization: "Basic \${RECEIVER_AUTH}"
          X-Route: mail`;
const LIST = `        headers:
          - { name: Authorization, value: "Basic \${RECEIVER_AUTH}" }`;

describeDialects('webhook custom headers in the config file and the CLI on %s', (dialect, skip) => {
  const t = freshStoreEach(dialect, skip);

  // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own ${VAR} syntax, named in the title.
  it.skipIf(skip)('the file sets them as a map or a list with ${VAR}; a second apply changes nothing', async () => {
    const env = { RECEIVER_AUTH: 'aG9vazpmaWxlLXNlY3JldA==' };
    const first = await applyConfig(t.store, parseConfigText(yaml(MAP), 'f.yaml', env), DEV);
    expect(first.changes).toContain('webhook acme/crm: created');
    expect((await t.store.webhookEndpoints.get('acme', 'crm'))?.headers).toEqual([
      { name: 'Authorization', value: `Basic ${env.RECEIVER_AUTH}` },
      { name: 'X-Route', value: 'mail' },
    ]);
    expect((await applyConfig(t.store, parseConfigText(yaml(MAP), 'f.yaml', env), DEV)).changes).toEqual([]);
    // The list form, one header fewer: an update.
    const list = await applyConfig(t.store, parseConfigText(yaml(LIST), 'f.yaml', env), DEV);
    expect(list.changes).toEqual(['webhook acme/crm: updated']);
    expect((await t.store.webhookEndpoints.get('acme', 'crm'))?.headers).toEqual([
      { name: 'Authorization', value: `Basic ${env.RECEIVER_AUTH}` },
    ]);
    // Left out: none.
    expect((await applyConfig(t.store, parseConfigText(yaml(''), 'f.yaml', env), DEV)).changes).toEqual([
      'webhook acme/crm: updated',
    ]);
    expect((await t.store.webhookEndpoints.get('acme', 'crm'))?.headers).toEqual([]);
  });

  it.skipIf(skip)('a reserved name, a line break or the mask in the file stops the apply, naming the path', async () => {
    const bad = yaml(`        headers:
          Content-Type: text/plain
          X-Split: "a\\r\\nb"
          X-Masked: "********"`);
    const err = await applyConfig(t.store, parseConfigText(bad, 'f.yaml', {}), DEV).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const text = String((err as Error).message);
    expect(text).toContain('organizations/0/webhooks/0/headers/2/value: is the mask "********" of "X-Masked"');
    expect(await t.store.webhookEndpoints.get('acme', 'crm')).toBeUndefined();
    const refused = await applyConfig(
      t.store,
      parseConfigText(yaml('        headers:\n          Content-Type: text/plain\n          X-Split: "a\\r\\nb"'), 'f.yaml', {}),
      DEV,
    ).catch((e: unknown) => e);
    expect(String((refused as Error).message)).toContain(
      'organizations/0/webhooks/0/headers/0/name: "Content-Type" is always application/json: it cannot be set',
    );
    expect(String((refused as Error).message)).toContain(
      'organizations/0/webhooks/0/headers/1/value: of "X-Split" has a line break',
    );
  });

  it.skipIf(skip)('mailroom webhooks add --header (repeatable); list shows the names only', async () => {
    const db = await freshDatabase(dialect);
    const store = await openTestStore(db.url, systemClock);
    try {
      await seedOrg(store);
    } finally {
      await store.close();
    }
    const env = { MAILROOM_DATABASE_URL: db.url, MAILROOM_DATA_DIR: '/tmp/mailroom-test-data', MAILROOM_LOG_LEVEL: 'silent' };
    const run = async (...argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(
        argv,
        env,
        (l) => out.push(l),
        (l) => err.push(l),
      );
      return { code, out: out.join('\n'), err: err.join('\n') };
    };
    try {
      const url = 'http://127.0.0.1:4000/hooks';
      const added = await run(
        'webhooks',
        'add',
        'acme',
        url,
        '--id',
        'crm',
        '--header',
        'Authorization: Basic Y2xpOnNlY3JldA==',
        '--header',
        'X-Route:mail',
      );
      expect(added.code, added.err).toBe(0);
      expect(added.out).toContain(`crm  enabled   *  ${url}  headers: Authorization, X-Route`);
      expect(added.out).not.toContain('Y2xpOnNlY3JldA==');
      const list = await run('webhooks', 'list', 'acme');
      expect(list.out).toContain('headers: Authorization, X-Route');
      expect(list.out).not.toContain('Y2xpOnNlY3JldA==');

      const reserved = await run('webhooks', 'add', 'acme', url, '--header', 'X-Ok: 1', '--header', 'Host: evil.example');
      expect(reserved.code).toBe(1);
      expect(reserved.err).toContain('--header 2 (name): "Host" is set from the URL: it cannot be set');
      const noColon = await run('webhooks', 'add', 'acme', url, '--header', 'Authorization');
      expect(noColon.err).toContain('--header 1: takes "Name: value"');
      const opened = await openTestStore(db.url, systemClock);
      try {
        expect((await opened.webhookEndpoints.get('acme', 'crm'))?.headers).toEqual([
          { name: 'Authorization', value: 'Basic Y2xpOnNlY3JldA==' },
          { name: 'X-Route', value: 'mail' },
        ]);
        expect(await opened.webhookEndpoints.list('acme')).toHaveLength(1);
      } finally {
        await opened.close();
      }
    } finally {
      await db.drop();
    }
  });
});
