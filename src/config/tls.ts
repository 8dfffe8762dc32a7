import path from 'node:path';

/** PEM certificate chain and key files, and the variables that named them (errors name them). */
export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** The variables that named the files (default MAILROOM_TLS_CERT_FILE / MAILROOM_TLS_KEY_FILE). */
  readonly certVariable?: string;
  readonly keyVariable?: string;
}

/** The files' contents, read and checked (src/http/tls.ts readTlsMaterial). */
export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
}

/** The API's pair (Config.tls): the names an error shows when a TlsFiles carries none. */
export const DEFAULT_CERT_VARIABLE = 'MAILROOM_TLS_CERT_FILE';
export const DEFAULT_KEY_VARIABLE = 'MAILROOM_TLS_KEY_FILE';

/**
 * The pair two variables name, resolved against `cwd`; undefined when neither is set. A
 * certificate without its key (or the reverse) is a half-done setup: starting without TLS
 * instead would hide it, so it is an error naming the variable that is missing.
 */
export function tlsFiles(
  read: (name: string) => string | undefined,
  certVariable: string,
  keyVariable: string,
  cwd: string,
  problems: string[],
): TlsFiles | undefined {
  const cert = read(certVariable);
  const key = read(keyVariable);
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) {
    const [missing, present] = cert === undefined ? [certVariable, keyVariable] : [keyVariable, certVariable];
    problems.push(`${missing} is not set, but ${present} is: set both or neither`);
    return undefined;
  }
  const files = { certFile: path.resolve(cwd, cert), keyFile: path.resolve(cwd, key) };
  // The API's own pair is the default readTlsMaterial names; only another pair carries its names.
  return certVariable === DEFAULT_CERT_VARIABLE ? files : { ...files, certVariable, keyVariable };
}
