import fs from 'node:fs';
import type { Server } from 'node:http';
import tls from 'node:tls';
import { ConfigError } from '../config/env.js';
import { DEFAULT_CERT_VARIABLE, DEFAULT_KEY_VARIABLE, type TlsFiles, type TlsMaterial } from '../config/tls.js';

/**
 * Reads the certificate chain and key and checks that they make a usable context (readable,
 * PEM, the key matches the certificate) before anything listens, so a typo is a start-up error
 * naming the file instead of a handshake failure on every request.
 */
export function readTlsMaterial(files: TlsFiles): TlsMaterial {
  const certVariable = files.certVariable ?? DEFAULT_CERT_VARIABLE;
  const keyVariable = files.keyVariable ?? DEFAULT_KEY_VARIABLE;
  const cert = readOne(certVariable, files.certFile);
  const key = readOne(keyVariable, files.keyFile);
  try {
    tls.createSecureContext({ cert, key });
  } catch (err) {
    throw new ConfigError(
      `${certVariable}/${keyVariable} (${files.certFile}, ${files.keyFile}) are not a usable certificate and key: ${reason(err)}`,
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

/** A listener whose certificate SIGHUP reloads: the HTTPS server, the SMTP submission listener (issue 28). */
export interface ReloadTarget {
  files: TlsFiles;
  /** Swaps the context: new handshakes get the new certificate, open connections keep theirs. */
  apply(material: TlsMaterial): void;
}

/** The HTTPS server as a reload target (a plain http.Server has no context to swap: nothing happens). */
export function httpsTarget(server: Server, files: TlsFiles): ReloadTarget {
  return {
    files,
    apply: (material) => {
      if (server instanceof tls.Server) server.setSecureContext(material);
    },
  };
}

/**
 * On SIGHUP, reads each target's files again and swaps its secure context: new handshakes get
 * the new certificate, open connections keep theirs (nothing is dropped). A file that is
 * missing or does not match keeps the old context and logs why, so a renewal script that
 * signals too early never takes the API off the air. Returns a function that stops listening.
 */
export function reloadOnSighup(targets: readonly ReloadTarget[], logger: ReloadLogger): () => void {
  const onHup = () => {
    for (const target of targets) {
      try {
        target.apply(readTlsMaterial(target.files));
        logger.info({ cert: target.files.certFile }, 'TLS certificate reloaded');
      } catch (err) {
        logger.error(
          { err: err instanceof Error ? err.message : String(err), cert: target.files.certFile },
          'TLS certificate reload failed; still serving the previous certificate',
        );
      }
    }
  };
  process.on('SIGHUP', onHup);
  return () => {
    process.off('SIGHUP', onHup);
  };
}
