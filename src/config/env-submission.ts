import { DEFAULT_CERT_VARIABLE, DEFAULT_KEY_VARIABLE, tlsFiles, type TlsFiles } from './tls.js';

// The SMTP submission listener's settings (issue 28), read where the environment is read
// (src/config/env.ts) and kept in their own file so env.ts stays near 300 lines.

export interface SubmissionSettings {
  /** MAILROOM_SUBMISSION_PORT: plain SMTP with STARTTLS when `tls` is set (587 in production). */
  readonly port: number;
  /** MAILROOM_SUBMISSION_HOST, default 0.0.0.0. */
  readonly host: string;
  /** MAILROOM_SUBMISSION_TLS_PORT: an implicit-TLS listener beside it (465); needs `tls`. */
  readonly tlsPort: number | undefined;
  /**
   * Certificate and key: MAILROOM_SUBMISSION_TLS_CERT_FILE/KEY_FILE when set (an HTTPS-terminating
   * proxy in front keeps the API on plain HTTP), else the API's pair, the same files as
   * Config.tls with their variables named (serve reads them once, and once on SIGHUP);
   * undefined: no STARTTLS (never smtp-server's built-in, publicly known certificate).
   */
  readonly tls: TlsFiles | undefined;
  /** MAILROOM_SUBMISSION_ALLOW_INSECURE=true: AUTH (plain-text passwords) before or without TLS outside development. */
  readonly allowInsecure: boolean;
  /** MAILROOM_SUBMISSION_MAX_CLIENTS, default 20, per listener. */
  readonly maxClients: number;
  /** MAILROOM_SUBMISSION_IDLE_SECONDS, default 60: a connection that says nothing this long is closed. */
  readonly idleMs: number;
}

type ReadInt = (name: string, fallback: number, min: number, max: number) => number;
type OneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T) => T;

/**
 * Undefined when MAILROOM_SUBMISSION_PORT is unset (the listener is off). A listener nobody can
 * log in to safely is a start-up error: production with neither certificate files nor
 * MAILROOM_SUBMISSION_ALLOW_INSECURE=true would refuse every AUTH (538) or, without STARTTLS,
 * take passwords in clear; the error names every variable that would fix it.
 */
export function submissionSettings(
  read: (name: string) => string | undefined,
  int: ReadInt,
  oneOf: OneOf,
  problems: string[],
  cwd: string,
  apiTls: TlsFiles | undefined,
): SubmissionSettings | undefined {
  const rawPort = read('MAILROOM_SUBMISSION_PORT');
  const rawTlsPort = read('MAILROOM_SUBMISSION_TLS_PORT');
  if (rawPort === undefined) {
    if (rawTlsPort !== undefined)
      problems.push('MAILROOM_SUBMISSION_TLS_PORT is set but MAILROOM_SUBMISSION_PORT is not: set both (587 and 465) or neither');
    return undefined;
  }
  const tls =
    tlsFiles(read, 'MAILROOM_SUBMISSION_TLS_CERT_FILE', 'MAILROOM_SUBMISSION_TLS_KEY_FILE', cwd, problems) ??
    (apiTls === undefined ? undefined : { ...apiTls, certVariable: DEFAULT_CERT_VARIABLE, keyVariable: DEFAULT_KEY_VARIABLE });
  const allowInsecure = oneOf('MAILROOM_SUBMISSION_ALLOW_INSECURE', ['true', 'false'] as const, 'false') === 'true';
  const tlsPort = rawTlsPort === undefined ? undefined : int('MAILROOM_SUBMISSION_TLS_PORT', 465, 0, 65535);
  if (tlsPort !== undefined && tls === undefined) {
    problems.push(
      'MAILROOM_SUBMISSION_TLS_PORT needs a certificate: set MAILROOM_TLS_CERT_FILE and MAILROOM_TLS_KEY_FILE ' +
        '(or MAILROOM_SUBMISSION_TLS_CERT_FILE and MAILROOM_SUBMISSION_TLS_KEY_FILE)',
    );
  }
  // Read raw, as webhookSettings does: a bad MAILROOM_ENV is reported once, where `env` is parsed.
  if (read('MAILROOM_ENV') === 'production' && tls === undefined && !allowInsecure) {
    problems.push(
      'MAILROOM_SUBMISSION_PORT is set in production without a certificate: set MAILROOM_TLS_CERT_FILE and ' +
        'MAILROOM_TLS_KEY_FILE (or MAILROOM_SUBMISSION_TLS_CERT_FILE and MAILROOM_SUBMISSION_TLS_KEY_FILE) for STARTTLS, ' +
        'or MAILROOM_SUBMISSION_ALLOW_INSECURE=true to take passwords without TLS',
    );
  }
  return {
    port: int('MAILROOM_SUBMISSION_PORT', 587, 0, 65535),
    host: read('MAILROOM_SUBMISSION_HOST') ?? '0.0.0.0',
    tlsPort,
    tls,
    allowInsecure,
    // 20: a DATA may hold up to the largest plan's limit (~22.6 MB) in memory, 20 × that ≈ 450 MB.
    maxClients: int('MAILROOM_SUBMISSION_MAX_CLIENTS', 20, 1, 10_000),
    // 60 s: longer than any client's pause between commands, short enough that idle sockets do not pile up.
    idleMs: int('MAILROOM_SUBMISSION_IDLE_SECONDS', 60, 5, 3600) * 1000,
  };
}
