import nodemailer from 'nodemailer';
import { isTlsFailure, smtpFailureOf, type SmtpFailure } from '../classify.js';
import type { SmtpSettings } from '../../domain/types.js';
import { ServiceTestError, type ServiceTestReason } from '../transport.js';

/**
 * The SMTP service test (POST …/services/{id}/test): connect, STARTTLS when offered or TLS from
 * the first byte (`secure`), AUTH when the service has a user, QUIT — nodemailer's verify(),
 * which sends no mail. It runs on a connection of its own, outside the sending pool, so its
 * short deadline does not shorten the pool's (10 s connect, 10 s greeting, 60 s socket).
 */

/** Nodemailer's and Node's codes for "nothing answered where the service points". */
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENODATA',
  'EPIPE',
]);

/** Which setting an operator should look at, from nodemailer's error (see ServiceTestReason). */
export function smtpVerifyReason(err: SmtpFailure): ServiceTestReason {
  const code = err.code ?? '';
  const status = err.responseCode;
  // 530 "authentication required", 534 "mechanism too weak", 535 "credentials invalid".
  if (code === 'EAUTH' || code === 'ENOAUTH' || status === 530 || status === 534 || status === 535) return 'auth';
  if (code === 'ETLS' || (status === undefined && isTlsFailure(err))) return 'tls';
  if (code === 'ETIMEDOUT' || err.originalCode === 'ETIMEDOUT') return 'timeout';
  if (code === 'EDNS' || CONNECT_CODES.has(err.originalCode ?? '') || CONNECT_CODES.has(code)) return 'connect';
  return 'other';
}

/** `timeoutMs` bounds each step (connect, greeting, every reply) and the whole test. */
export async function verifySmtp(smtp: SmtpSettings, timeoutMs: number): Promise<void> {
  const transporter = nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure,
    ...(smtp.user !== '' ? { auth: { user: smtp.user, pass: smtp.pass } } : {}),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  let timer: NodeJS.Timeout | undefined;
  // A DNS lookup is not bounded by nodemailer's timeouts: the whole test is, a little later.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ServiceTestError('timeout', `${smtp.host}:${smtp.port} did not complete the test within ${timeoutMs} ms`)),
      timeoutMs + 1_000,
    );
  });
  try {
    await Promise.race([transporter.verify(), deadline]);
  } catch (error) {
    if (error instanceof ServiceTestError) throw error;
    const err = smtpFailureOf(error);
    const reason = smtpVerifyReason(err);
    const where = `${smtp.host}:${smtp.port} (secure: ${smtp.secure})`;
    // A 4xx reply (421 at the greeting, 454 to STARTTLS) is the relay saying "not now".
    const later = err.responseCode !== undefined && err.responseCode >= 400 && err.responseCode < 500;
    throw new ServiceTestError(reason, `${where}: ${(err.response ?? err.message).trim()}`, later || undefined);
  } finally {
    clearTimeout(timer);
    transporter.close();
  }
}
