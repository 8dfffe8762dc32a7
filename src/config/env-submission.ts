import path from 'node:path';

// The SMTP submission listener's settings (issue 28), read where the environment is read
// (src/config/env.ts) and kept in their own file so env.ts stays near 300 lines.

/** PEM files the submission listener's TLS uses, and the variables that named them (errors name them). */
export interface SubmissionTlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** MAILROOM_SUBMISSION_TLS_CERT_FILE when set (submission only), else MAILROOM_TLS_CERT_FILE (shared with HTTPS). */
  readonly certVariable: string;
  readonly keyVariable: string;
}

export interface SubmissionSettings {
  /** MAILROOM_SUBMISSION_PORT: plain SMTP with STARTTLS when `tls` is set (587 in production). */
  readonly port: number;
  /** MAILROOM_SUBMISSION_HOST, default 0.0.0.0. */
  readonly host: string;
  /** MAILROOM_SUBMISSION_TLS_PORT: an implicit-TLS listener beside it (465); needs `tls`. */
  readonly tlsPort: number | undefined;
  /** Certificate and key; undefined: no STARTTLS (never smtp-server's built-in, publicly known certificate). */
  readonly tls: SubmissionTlsFiles | undefined;
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
): SubmissionSettings | undefined {
  const rawPort = read('MAILROOM_SUBMISSION_PORT');
  const rawTlsPort = read('MAILROOM_SUBMISSION_TLS_PORT');
  if (rawPort === undefined) {
    if (rawTlsPort !== undefined)
      problems.push('MAILROOM_SUBMISSION_TLS_PORT is set but MAILROOM_SUBMISSION_PORT is not: set both (587 and 465) or neither');
    return undefined;
  }
  const tls = submissionTls(read, problems, cwd);
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

/** Submission-only files win (an HTTPS-terminating proxy in front keeps the API on plain HTTP); else the API's. */
function submissionTls(
  read: (name: string) => string | undefined,
  problems: string[],
  cwd: string,
): SubmissionTlsFiles | undefined {
  const own = pair(read, problems, cwd, 'MAILROOM_SUBMISSION_TLS_CERT_FILE', 'MAILROOM_SUBMISSION_TLS_KEY_FILE');
  if (own !== null) return own;
  // The API's pair: a half-set pair is already reported by env.ts's tlsFiles.
  const cert = read('MAILROOM_TLS_CERT_FILE');
  const key = read('MAILROOM_TLS_KEY_FILE');
  if (cert === undefined || key === undefined) return undefined;
  return {
    certFile: path.resolve(cwd, cert),
    keyFile: path.resolve(cwd, key),
    certVariable: 'MAILROOM_TLS_CERT_FILE',
    keyVariable: 'MAILROOM_TLS_KEY_FILE',
  };
}

/** null: neither set; undefined: half set (reported). */
function pair(
  read: (name: string) => string | undefined,
  problems: string[],
  cwd: string,
  certVariable: string,
  keyVariable: string,
): SubmissionTlsFiles | undefined | null {
  const cert = read(certVariable);
  const key = read(keyVariable);
  if (cert === undefined && key === undefined) return null;
  if (cert === undefined || key === undefined) {
    const [missing, present] = cert === undefined ? [certVariable, keyVariable] : [keyVariable, certVariable];
    problems.push(`${missing} is not set, but ${present} is: set both or neither`);
    return undefined;
  }
  return { certFile: path.resolve(cwd, cert), keyFile: path.resolve(cwd, key), certVariable, keyVariable };
}
