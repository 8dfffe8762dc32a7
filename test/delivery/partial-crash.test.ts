import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, it } from 'vitest';
import { newId, sha256 } from '../../src/domain/ids.js';
import type { Store } from '../../src/storage/store.js';
import { seedOrg } from '../support/seed.js';
import { makeQueuedDue, statusCounts, storedRecipientStates } from '../support/db.js';
import { freshStore } from '../support/stores.js';
import { type Closer, tempDir } from '../support/cleanup.js';
import { CONTACT_TEMPLATE, deliveryHarness, renderedEmail, smtpService } from '../support/delivery.js';
import { smtpError, startSink, waitFor } from '../support/smtp-sink.js';
import { describeDialects } from '../support/dialects.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin/mailroom.js');
const BUILT_CLI = path.join(ROOT, 'dist/src/cli/main.js');

function spawnWorker(
  env: Record<string, string>,
  closer: Closer,
): { child: ChildProcess; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> } {
  const child = spawn(process.execPath, [BIN, 'worker'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  closer.defer(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  return { child, exited };
}

/** `n` queued messages, each To `to<i>@example.com` and Cc `cc<i>@example.com`. */
async function insertTwoRecipientMessages(store: Store, n: number, createdAt: number): Promise<string[]> {
  const ids: string[] = [];
  await store.transaction(async (tx) => {
    for (let i = 0; i < n; i++) {
      const id = newId('msg');
      ids.push(id);
      const email = {
        ...renderedEmail(i),
        to: [{ name: '', address: `to${i}@example.com` }],
        cc: [{ name: '', address: `cc${i}@example.com` }],
      };
      await tx.messages.insert({
        id,
        org_id: 'acme',
        template_id: 'contact',
        service_id: 'smtp',
        status: 'queued',
        status_token_hash: sha256(id),
        key_type: 'private',
        content: JSON.stringify(email),
        subject: email.subject,
        header_message_id: `<${id}@mailroom.test>`,
        attachments: null,
        credit_taken: true,
        idempotency_key: null,
        recipients: [
          { kind: 'to', email: `to${i}@example.com` },
          { kind: 'cc', email: `cc${i}@example.com` },
        ],
        created_at: createdAt,
      });
    }
  });
  return ids;
}

async function recipientStates(store: Store): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const state of await storedRecipientStates(store)) counts[state] = (counts[state] ?? 0) + 1;
  return counts;
}

beforeAll(() => {
  if (!fs.existsSync(BUILT_CLI)) throw new Error(`${BUILT_CLI} is missing: run \`npm run build\` first (npm test does)`);
});

describeDialects('a partial refusal across a SIGKILL of `mailroom worker` on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)(
    'the first attempt reaches the To and defers the Cc; killed, a new worker sends to the Cc alone',
    { timeout: 90_000 },
    async () => {
      const t = await freshStore(dialect);
      h.closer.defer(() => t.cleanup());
      // Every Cc is refused for now on its first RCPT and accepted on the next.
      const sink = await startSink(
        { rcpt: (a, n) => (a.startsWith('cc') && n === 1 ? smtpError(451, '4.3.0 Try again later') : undefined) },
        h.closer,
      );
      await seedOrg(t.store, { credits: 5000, services: [smtpService(sink.port)], templates: [CONTACT_TEMPLATE] });
      const total = 20;
      const ids = await insertTwoRecipientMessages(t.store, total, Date.now());
      const env = {
        MAILROOM_DATABASE_URL: t.database.url,
        MAILROOM_DATA_DIR: tempDir(h.closer),
        MAILROOM_WORKER_LEASE_SECONDS: '2',
        MAILROOM_WORKER_POLL_MS: '50',
        MAILROOM_LOG_LEVEL: 'warn',
      };

      const first = spawnWorker(env, h.closer);
      // Every message's first attempt is over: its To sent, its Cc deferred, the message queued.
      await waitFor(
        async () => {
          const s = await recipientStates(t.store);
          return s.sent === total && s.deferred === total && (await statusCounts(t.store)).queued === total;
        },
        30_000,
        'every first attempt to be recorded',
      );
      first.child.kill('SIGKILL');
      expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
      expect(sink.received).toHaveLength(total);

      // The retries are due ~30 s later: move them to now rather than wait.
      await makeQueuedDue(t.store, Date.now());
      const second = spawnWorker(env, h.closer);
      await waitFor(async () => (await statusCounts(t.store)).sent === total, 30_000, 'every message to be sent');
      second.child.kill('SIGTERM');
      await second.exited;

      expect(await recipientStates(t.store)).toEqual({ sent: 2 * total });
      const rcpts = sink.received.flatMap((r) => r.rcptTo);
      for (let i = 0; i < total; i++) {
        // Each recipient got the message exactly once: the To on the first attempt, the Cc on the retry.
        expect(rcpts.filter((a) => a === `to${i}@example.com`)).toHaveLength(1);
        expect(rcpts.filter((a) => a === `cc${i}@example.com`)).toHaveLength(1);
      }
      expect(sink.received.slice(total).every((r) => r.rcptTo.length === 1 && r.rcptTo[0]!.startsWith('cc'))).toBe(true);
      // Both halves of each message carry its one Message-ID.
      const byId = new Map<string, number>();
      for (const r of sink.received) byId.set(r.messageId ?? '', (byId.get(r.messageId ?? '') ?? 0) + 1);
      expect(new Set(byId.keys())).toEqual(new Set(ids.map((id) => `<${id}@mailroom.test>`)));
      expect([...byId.values()].every((n) => n === 2)).toBe(true);
    },
  );
});
