import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Closer } from './cleanup.js';

/** Helpers for tests that start the real `mailroom` binary (bin/mailroom.js over dist/). */

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'bin/mailroom.js');
const BUILT_CLI = path.join(ROOT, 'dist/src/cli/main.js');

export function requireBuild(): void {
  if (!fs.existsSync(BUILT_CLI)) throw new Error(`${BUILT_CLI} is missing: run \`npm run build\` first (npm test does)`);
}

export interface Running {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  /** Resolves once the output contains `text`; rejects if the process exits or `ms` pass first. */
  waitForOutput(text: string | RegExp, ms?: number): Promise<void>;
}

/** Starts `mailroom ARGS` with only PATH and `env`; killed (SIGKILL) when `c` closes if still running. */
export function startCli(args: string[], env: Record<string, string>, c: Closer): Running {
  return startProcess(process.execPath, [BIN, ...args], env, c, `mailroom ${args.join(' ')}`);
}

/** Starts any program the same way (a reverse proxy in front of mailroom, say). */
export function startProcess(command: string, args: string[], env: Record<string, string>, c: Closer, label = command): Running {
  const child = spawn(command, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  let outputClosed = false;
  child.on('close', () => {
    outputClosed = true;
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code, signal) => {
      // A death by signal shows in the output, which assertions print on failure.
      if (signal !== null) output += `\n[${label} ended by ${signal}]`;
      resolve(code);
    }),
  );
  c.defer(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  const waitForOutput = (text: string | RegExp, ms = 20_000): Promise<void> =>
    new Promise((resolve, reject) => {
      const found = () => (typeof text === 'string' ? output.includes(text) : text.test(output));
      // Checked on each chunk (after the listener above has added it) and once its output is closed.
      const check = () => {
        if (found()) finish();
      };
      const closed = () =>
        finish(
          found() ? undefined : new Error(`${label} exited with ${child.exitCode} before printing ${String(text)}:\n${output}`),
        );
      const deadline = setTimeout(
        () => finish(new Error(`${label} did not print ${String(text)} within ${ms} ms:\n${output}`)),
        ms,
      );
      const finish = (err?: Error) => {
        clearTimeout(deadline);
        child.stdout?.off('data', check);
        child.stderr?.off('data', check);
        child.off('close', closed);
        if (err === undefined) resolve();
        else reject(err);
      };
      child.stdout?.on('data', check);
      child.stderr?.on('data', check);
      child.on('close', closed);
      if (outputClosed) closed();
      else check();
    });
  return { child, output: () => output, exited, waitForOutput };
}

export interface TestCert {
  certFile: string;
  keyFile: string;
  cert: string;
}

/**
 * A fresh self-signed certificate for localhost (and 127.0.0.1, ::1), made by openssl in the
 * test's temp dir: no private key is ever committed.
 */
export function selfSigned(dir: string, name: string): TestCert {
  const certFile = path.join(dir, `${name}.crt`);
  const keyFile = path.join(dir, `${name}.key`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=localhost/O=mailroom test ${name}`,
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return { certFile, keyFile, cert: fs.readFileSync(certFile, 'utf8') };
}
