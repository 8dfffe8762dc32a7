import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { ServiceTestError, type OutgoingEmail, type Transport } from '../../../src/delivery/transport.js';
import type { Service } from '../../../src/domain/types.js';
import type { Closer } from '../cleanup.js';

/**
 * Helpers for the HTTP providers' transport tests without the worker (Mailgun, SES, Resend,
 * SendGrid): a service row, a small message, the error a promise rejects with, and verify()'s
 * outcome.
 */

/** A default service row of `acme` for `provider`, with `settings` as given (no wrapping). */
export function serviceRow(provider: string, settings: Record<string, unknown>, id = provider): Service {
  return {
    org_id: 'acme',
    id,
    provider,
    settings,
    is_default: true,
    max_per_second: null,
    version: 1,
    created_at: 0,
    updated_at: 0,
  };
}

/** One message to a@example.com, Bcc b@example.com, text only, no attachments. */
export const MAIL: OutgoingEmail = {
  messageId: 'msg_unit0001',
  headerMessageId: '<msg_unit0001@mailroom.test>',
  email: {
    subject: 'Hi',
    from: { name: 'Acme', address: 'noreply@acme.test' },
    reply_to: [],
    to: [{ name: '', address: 'a@example.com' }],
    cc: [],
    bcc: [{ name: '', address: 'b@example.com' }],
    html: '',
    text: 'Hello',
  },
  attachments: [],
};

/** What `p` rejects with; a test failure if it resolves. */
export async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

/** Runs `fn` with `transport`, then closes it and everything deferred to `closer`. */
export async function withTransport(transport: Transport, closer: Closer, fn: (t: Transport) => Promise<void>): Promise<void> {
  try {
    await fn(transport);
  } finally {
    await transport.close();
    await closer.closeAll();
  }
}

/** verify() must fail with a ServiceTestError: its reason and message. */
export async function reasonOf(t: Transport): Promise<[string, string]> {
  const err = await failure(t.verify!());
  expect(err).toBeInstanceOf(ServiceTestError);
  return [(err as ServiceTestError).reason, (err as ServiceTestError).message];
}

/** verify()'s outcome, the transport closed after: 'ok', a ServiceTestError's reason, or the other error as text. */
export async function verifyOutcome(transport: Transport): Promise<string> {
  try {
    await transport.verify!();
    return 'ok';
  } catch (e) {
    return e instanceof ServiceTestError ? e.reason : String(e);
  } finally {
    await transport.close();
  }
}

/** Runs `fn` with the URL of a loopback server that accepts connections and never answers. */
export async function withSilentServer(fn: (endpoint: string) => Promise<void>): Promise<void> {
  const silent = http.createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    await fn(`http://127.0.0.1:${(silent.address() as AddressInfo).port}`);
  } finally {
    silent.closeAllConnections();
    silent.close();
  }
}
