import { execFileSync } from 'node:child_process';
import { createSign } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { canonicalString, type SnsMessage } from '../../../src/events/sources/sns-verify.js';
import { freePort } from '../smtp-sink.js';

/**
 * A stand-in for SNS: an RSA key and a self-signed X.509 certificate made by openssl (node has
 * no X.509 writer), served on a loopback HTTP server, and a signer for SNS messages. The server
 * also answers a SubscribeURL, a redirect and counts requests, so tests see what was fetched.
 */
export interface FakeSns {
  /** `127.0.0.1:<port>`: the MAILROOM_SNS_CERT_HOSTS entry that lets tests fetch from it. */
  host: string;
  base: string;
  certUrl: string;
  /** A second certificate whose key did not sign anything (wrong key). */
  otherCertUrl: string;
  requests: string[];
  sign(
    fields: Omit<SnsMessage, 'Signature' | 'SigningCertURL' | 'SignatureVersion'>,
    options?: { version?: '1' | '2'; certUrl?: string },
  ): SnsMessage;
  close(): Promise<void>;
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

function makeCert(dir: string, name: string): { key: string; cert: string } {
  const keyFile = path.join(dir, `${name}.key`);
  const certFile = path.join(dir, `${name}.pem`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      '/CN=sns.test',
    ],
    { stdio: 'ignore' },
  );
  return { key: fs.readFileSync(keyFile, 'utf8'), cert: fs.readFileSync(certFile, 'utf8') };
}

export async function fakeSns(): Promise<FakeSns> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-sns-'));
  const main = makeCert(dir, 'main');
  const other = makeCert(dir, 'other');
  fs.rmSync(dir, { recursive: true, force: true });
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    requests.push(url);
    if (url === '/cert.pem') res.end(main.cert);
    else if (url === '/other.pem') res.end(other.cert);
    else if (url.startsWith('/confirm')) res.end('<ConfirmSubscriptionResponse/>');
    else if (url === '/redirect.pem') {
      res.writeHead(302, { location: '/cert.pem' });
      res.end();
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  const port = await listen(server);
  const host = `127.0.0.1:${port}`;
  const base = `http://${host}`;
  return {
    host,
    base,
    certUrl: `${base}/cert.pem`,
    otherCertUrl: `${base}/other.pem`,
    requests,
    sign(fields, options = {}) {
      const version = options.version ?? '2';
      const unsigned: SnsMessage = {
        ...fields,
        SignatureVersion: version,
        Signature: '',
        SigningCertURL: options.certUrl ?? `${base}/cert.pem`,
      };
      const signer = createSign(version === '1' ? 'RSA-SHA1' : 'RSA-SHA256');
      signer.update(canonicalString(unsigned));
      return { ...unsigned, Signature: signer.sign(main.key, 'base64') };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export const TOPIC = 'arn:aws:sns:us-east-1:123456789012:ses-events';

/** An SES record in either format, for one message and its recipients. */
export function sesRecord(
  kind: string,
  format: 'notification' | 'event',
  detail: Record<string, unknown>,
  mail: Record<string, unknown> = {},
): string {
  const field =
    { Delivery: 'delivery', Bounce: 'bounce', Complaint: 'complaint', DeliveryDelay: 'deliveryDelay', Reject: 'reject' }[kind] ??
    kind;
  return JSON.stringify({
    [format === 'notification' ? 'notificationType' : 'eventType']: kind,
    mail: {
      timestamp: '2026-11-25T10:00:00.000Z',
      messageId: '0100018c-ses-id-000000',
      source: 'app@example.com',
      destination: ['a@example.org', 'b@example.org'],
      headers: [{ name: 'Message-ID', value: '<ours@mailroom>' }],
      commonHeaders: { messageId: '<ours@mailroom>' },
      ...mail,
    },
    [field]: detail,
  });
}

/**
 * A certificate host having a bad day, on loopback: `/500.pem` answers 500, `/garbled.pem`
 * answers 200 with text that is no PEM, `/flaky.pem` answers 503 until `recover()` and then
 * the certificate it was given. `closedHost` is a loopback port nothing listens on (connection
 * refused). Each is an allowed host in the tests, so what is checked is the outage, not the rule.
 */
export interface CertOutage {
  host: string;
  base: string;
  closedHost: string;
  requests: string[];
  recover(): void;
  close(): Promise<void>;
}

export async function certOutage(goodPem: string): Promise<CertOutage> {
  const requests: string[] = [];
  let recovered = false;
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    requests.push(url);
    if (url === '/500.pem') res.writeHead(500).end('internal error');
    else if (url === '/garbled.pem')
      res.end('-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n');
    else if (url === '/flaky.pem' && recovered) res.end(goodPem);
    else if (url === '/flaky.pem') res.writeHead(503).end();
    else res.writeHead(404).end();
  });
  const port = await listen(server);
  // A port that was free a moment ago: connecting to it is refused.
  const closedPort = await freePort();
  return {
    host: `127.0.0.1:${port}`,
    base: `http://127.0.0.1:${port}`,
    closedHost: `127.0.0.1:${closedPort}`,
    requests,
    recover: () => {
      recovered = true;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
