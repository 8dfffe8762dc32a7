import fs from 'node:fs';
import type { Server } from 'node:http';
import tls from 'node:tls';
import { ConfigError } from '../config/env.js';

export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
}

/**
 * Reads the certificate chain and key and checks that they make a usable context (readable,
 * PEM, the key matches the certificate) before anything listens, so a typo is a start-up error
 * naming the file instead of a handshake failure on every request.
 */
export function readTlsMaterial(files: TlsFiles): TlsMaterial {
  const cert = readOne('MAILROOM_TLS_CERT_FILE', files.certFile);
  const key = readOne('MAILROOM_TLS_KEY_FILE', files.keyFile);
  try {
    tls.createSecureContext({ cert, key });
  } catch (err) {
    throw new ConfigError(
      `MAILROOM_TLS_CERT_FILE/MAILROOM_TLS_KEY_FILE ` +
        `(${files.certFile}, ${files.keyFile}) are not a usable certificate and key: ${reason(err)}`,
    );
  }
  return { cert, key };
}

function readOne(variable: string, file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new ConfigError(`${variable}: cannot read ${file}: ${reason(err)}`);
  }
}

/** `ENOENT`, `EACCES`… for file errors, OpenSSL's message for the rest. */
function reason(err: unknown): string {
  if (err instanceof Error)
    return 'code' in err && typeof err.code === 'string' && /^E[A-Z]+$/.test(err.code) ? err.code : err.message;
  return String(err);
}

export interface ReloadLogger {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * On SIGHUP, reads the files again and swaps the server's secure context: new handshakes get
 * the new certificate, open connections keep theirs (nothing is dropped). A file that is
 * missing or does not match keeps the old context and logs why, so a renewal script that
 * signals too early never takes the API off the air. Returns a function that stops listening.
 */
export function reloadOnSighup(server: Server, files: TlsFiles, logger: ReloadLogger): () => void {
  const onHup = () => {
    if (!(server instanceof tls.Server)) return;
    try {
      const material = readTlsMaterial(files);
      server.setSecureContext(material);
      logger.info({ cert: files.certFile }, 'TLS certificate reloaded');
    } catch (err) {
      logger.error(
        { err: err instanceof Error ? err.message : String(err) },
        'TLS certificate reload failed; still serving the previous certificate',
      );
    }
  };
  process.on('SIGHUP', onHup);
  return () => {
    process.off('SIGHUP', onHup);
  };
}
