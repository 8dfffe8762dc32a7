import pino from 'pino';
import { buildServices } from '../../src/cli/runtime.js';
import type { Caller } from '../../src/domain/caller.js';
import { createSendDeps, type SendDeps } from '../../src/send/accept.js';
import { acceptSubmission, type SubmissionAccepted } from '../../src/send/submission.js';
import type { Store } from '../../src/storage/store.js';
import type { TestApp } from '../support/app.js';
import type { Closer } from '../support/cleanup.js';

/**
 * What the submission tests share (issue 28, helper X's side): send deps over a test app's store
 * (as `mailroom serve` builds them), a caller from a key, and messages written as an SMTP client
 * writes them (CRLF). The listener's own helpers are test/support/submission.ts.
 */

export const TEST_MODE_KEY = 'sk_test_submission_0001';
export const CLIENT = { ip: '127.0.0.1', origin: undefined, referer: undefined, userAgent: undefined, secChUa: undefined };

export function depsFor(t: TestApp, closer: Closer): SendDeps {
  const services = buildServices(t.config, { store: t.store, clock: t.clock, logger: pino({ level: 'silent' }) });
  closer.defer(() => services.close());
  return createSendDeps({
    store: t.store,
    clock: t.clock,
    config: t.config,
    blobs: services.blobs.blobs,
    metrics: undefined,
    protection: services.protection,
    onAccepted: undefined,
  });
}

export async function callerOf(store: Store, value: string): Promise<Caller> {
  const key = await store.catalog.keyByValue(value);
  if (key === undefined) throw new Error(`no key ${value}`);
  const org = await store.catalog.organization(key.org_id);
  if (org === undefined) throw new Error(`no organization ${key.org_id}`);
  return { org, key };
}

/** Header lines and a body joined with CRLF, as DATA carries them (dot-unstuffed). */
export function message(headers: readonly string[], body = 'Hello from SMTP.\r\n'): Buffer {
  return Buffer.from(`${headers.join('\r\n')}\r\n\r\n${body}`, 'utf8');
}

export const BASIC_HEADERS = [
  'From: App <app@acme.test>',
  'To: Ann <ann@example.com>',
  'Subject: Hello',
  'Date: Thu, 05 Mar 2026 10:00:00 +0000',
  'Message-ID: <first@app.acme.test>',
] as const;

export function submit(
  deps: SendDeps,
  caller: Caller,
  mime: Buffer,
  recipients: readonly string[] = ['ann@example.com'],
): Promise<SubmissionAccepted> {
  return acceptSubmission(deps, { caller, client: CLIENT, recipients, mime });
}

/** The ApiError a promise rejects with: its code, message and details.reason. */
export async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string; reason: unknown }> {
  try {
    await p;
  } catch (err) {
    const e = err as { code?: string; message: string; details?: Record<string, unknown> };
    return { code: e.code ?? 'not an ApiError', message: e.message, reason: e.details?.reason };
  }
  throw new Error('expected a refusal, and it was accepted');
}
