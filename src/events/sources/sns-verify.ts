import { X509Certificate, createVerify, type KeyObject } from 'node:crypto';
import { ApiError } from '../../errors/api-error.js';
import { isLoopbackHost } from '../../net/loopback.js';
import { IntakeRejected } from '../types.js';
import { isRecord } from './wire.js';

/**
 * Amazon SNS message signatures (what SES events arrive in). SNS signs a canonical string of
 * the message's fields with the private key of a certificate it names in `SigningCertURL`:
 * SignatureVersion 1 is SHA1withRSA, 2 is SHA256withRSA. The URL is attacker-controlled until
 * the signature checks out, so it is fetched only when it is https on an allowlisted host
 * (MAILROOM_SNS_CERT_HOSTS), never following a redirect; plain http only for a loopback host
 * listed explicitly (tests). The same rule guards the SubscribeURL we confirm.
 */

/** An SNS message as posted: every field the signature covers is a string. */
export interface SnsMessage {
  Type: 'Notification' | 'SubscriptionConfirmation' | 'UnsubscribeConfirmation';
  MessageId: string;
  TopicArn: string;
  Message: string;
  Timestamp: string;
  SignatureVersion: '1' | '2';
  Signature: string;
  SigningCertURL: string;
  Subject?: string;
  SubscribeURL?: string;
  Token?: string;
}

const TYPES = ['Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation'] as const;
const isType = (v: unknown): v is SnsMessage['Type'] => typeof v === 'string' && (TYPES as readonly string[]).includes(v);
const isVersion = (v: unknown): v is SnsMessage['SignatureVersion'] => v === '1' || v === '2';

/** Reads an SNS envelope without casts; anything not shaped like one is refused (unverifiable). */
export function readSnsMessage(body: unknown): SnsMessage {
  if (!isRecord(body)) throw new IntakeRejected('the body is not an SNS message');
  const s = (name: string): string => {
    const v = body[name];
    if (typeof v !== 'string' || v === '') throw new IntakeRejected(`SNS message without ${name}`);
    return v;
  };
  const optional = (name: string): string | undefined => (typeof body[name] === 'string' ? String(body[name]) : undefined);
  const type = body.Type;
  const version = body.SignatureVersion;
  if (!isType(type)) throw new IntakeRejected('unknown SNS message Type');
  if (!isVersion(version)) throw new IntakeRejected('unsupported SNS SignatureVersion');
  const message: SnsMessage = {
    Type: type,
    MessageId: s('MessageId'),
    TopicArn: s('TopicArn'),
    // An empty Message is still signed (as an empty value), so it is read as given.
    Message: typeof body.Message === 'string' ? body.Message : s('Message'),
    Timestamp: s('Timestamp'),
    SignatureVersion: version,
    Signature: s('Signature'),
    SigningCertURL: s('SigningCertURL'),
  };
  const subject = optional('Subject');
  if (subject !== undefined) message.Subject = subject;
  if (type !== 'Notification') {
    message.SubscribeURL = s('SubscribeURL');
    message.Token = s('Token');
  }
  return message;
}

/**
 * The string SNS signs: `Name\nValue\n` for each field in this order. Notification: Message,
 * MessageId, Subject (only when present), Timestamp, TopicArn, Type. Subscription and
 * unsubscribe confirmations: Message, MessageId, SubscribeURL, Timestamp, Token, TopicArn, Type.
 */
export function canonicalString(m: SnsMessage): string {
  const fields: Array<[string, string | undefined]> =
    m.Type === 'Notification'
      ? [
          ['Message', m.Message],
          ['MessageId', m.MessageId],
          ['Subject', m.Subject],
          ['Timestamp', m.Timestamp],
          ['TopicArn', m.TopicArn],
          ['Type', m.Type],
        ]
      : [
          ['Message', m.Message],
          ['MessageId', m.MessageId],
          ['SubscribeURL', m.SubscribeURL],
          ['Timestamp', m.Timestamp],
          ['Token', m.Token],
          ['TopicArn', m.TopicArn],
          ['Type', m.Type],
        ];
  return fields
    .filter((f): f is [string, string] => f[1] !== undefined)
    .map(([k, v]) => `${k}\n${v}\n`)
    .join('');
}

/**
 * Host patterns of MAILROOM_SNS_CERT_HOSTS: `*` stands for exactly one DNS label (letters,
 * digits, hyphens), so `sns.*.amazonaws.com` matches `sns.us-east-1.amazonaws.com` but neither
 * `sns.amazonaws.com` nor `sns.a.b.amazonaws.com` nor `sns.x.amazonaws.com.evil.test`. A pattern
 * may end in `:port`; without one, only the scheme's default port is allowed.
 */
export function hostAllowed(pattern: string, hostname: string, port: string): boolean {
  const colon = pattern.lastIndexOf(':');
  const hasPort = colon > 0 && /^\d+$/.test(pattern.slice(colon + 1)) && !pattern.includes(']', colon);
  const hostPattern = (hasPort ? pattern.slice(0, colon) : pattern).toLowerCase();
  const wantPort = hasPort ? pattern.slice(colon + 1) : '';
  if (port !== wantPort) return false;
  const want = hostPattern.split('.');
  const have = hostname.toLowerCase().split('.');
  if (want.length !== have.length) return false;
  return want.every((label, i) => (label === '*' ? /^[a-z0-9-]+$/.test(have[i] ?? '') : label === have[i]));
}

/**
 * Whether we may fetch this URL (a SigningCertURL or SubscribeURL): https on an allowed host,
 * no userinfo (`https://sns.x.amazonaws.com@evil.test/` names evil.test), or http on a
 * loopback host (isLoopbackHost) that a pattern without `*` names: loopback alone is not enough
 * here, the operator must have listed that very host.
 */
export function urlAllowed(raw: string, hosts: readonly string[]): URL | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.username !== '' || url.password !== '') return undefined;
  if (url.protocol === 'https:') return hosts.some((p) => hostAllowed(p, url.hostname, url.port)) ? url : undefined;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) {
    return hosts.some((p) => !p.includes('*') && hostAllowed(p, url.hostname, url.port)) ? url : undefined;
  }
  return undefined;
}

/** Fetches a text resource under the URL rule: no redirects, a timeout, a size cap. */
export type FetchText = (url: URL) => Promise<string>;

const MAX_FETCH_BYTES = 64 * 1024;

export const fetchText: FetchText = async (url) => {
  const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(5000) });
  // A redirect could lead anywhere: it is a failure, not a hop.
  if (response.status !== 200) throw new Error(`GET ${url.host}${url.pathname} answered ${response.status}`);
  // A certificate is a few KiB: a larger answer is refused before (by its length) or after reading.
  if (Number(response.headers.get('content-length') ?? 0) > MAX_FETCH_BYTES) throw new Error('response larger than 64 KiB');
  const text = await response.text();
  if (text.length > MAX_FETCH_BYTES) throw new Error('response larger than 64 KiB');
  return text;
};

export interface SnsVerifierOptions {
  certHosts: readonly string[];
  fetchText?: FetchText;
  /** Certificates kept (by URL); the oldest goes first. SNS rotates them rarely. */
  cacheSize?: number;
}

export interface SnsVerifier {
  /**
   * Throws IntakeRejected (401) unless the message's signature checks with its allowed
   * certificate, or ApiError service_unavailable (503) when that certificate cannot be fetched
   * or read just now.
   */
  verify(message: SnsMessage, now: number): Promise<void>;
  /** The URL when it may be fetched, else undefined. */
  allowed(raw: string): URL | undefined;
  fetchText: FetchText;
}

export function snsVerifier(options: SnsVerifierOptions): SnsVerifier {
  const fetchImpl = options.fetchText ?? fetchText;
  const max = options.cacheSize ?? 32;
  const cache = new Map<string, Promise<X509Certificate>>();

  const certificate = (url: URL): Promise<X509Certificate> => {
    const key = url.href;
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    const loading = fetchImpl(url).then((pem) => new X509Certificate(pem));
    // A failed fetch is not remembered: the next event tries again.
    loading.catch(() => cache.delete(key));
    cache.set(key, loading);
    while (cache.size > max) {
      const oldest = cache.keys().next().value;
      if (oldest === undefined) break;
      cache.delete(oldest);
    }
    return loading;
  };

  return {
    allowed: (raw) => urlAllowed(raw, options.certHosts),
    fetchText: fetchImpl,
    async verify(message, now) {
      const url = urlAllowed(message.SigningCertURL, options.certHosts);
      if (url === undefined) throw new IntakeRejected('SigningCertURL is not on an allowed host');
      let cert: X509Certificate;
      try {
        cert = await certificate(url);
      } catch (err) {
        // The URL passed the host rule, so this is an outage (network, timeout, 5xx, a garbled
        // answer), not a forgery we can tell: 503 makes SNS deliver the message again, where a
        // 401 would lose a genuine event (SNS does not retry most 4xx). Nothing is recorded
        // either way; a forged URL on an allowed host gains nothing but a retry of its own.
        const why = err instanceof Error ? err.message : String(err);
        throw new ApiError('service_unavailable', {
          message: `The SNS signing certificate could not be fetched or read (${why}); SNS will deliver the message again.`,
        });
      }
      // Five minutes' grace on notBefore: a certificate issued just now on a clock ahead of ours.
      if (now < Date.parse(cert.validFrom) - 5 * 60_000 || now > Date.parse(cert.validTo)) {
        throw new IntakeRejected('the signing certificate is not valid now');
      }
      const key: KeyObject = cert.publicKey;
      if (key.asymmetricKeyType !== 'rsa') throw new IntakeRejected('the signing certificate has no RSA key');
      const verifier = createVerify(message.SignatureVersion === '1' ? 'RSA-SHA1' : 'RSA-SHA256');
      verifier.update(canonicalString(message), 'utf8');
      let ok = false;
      try {
        ok = verifier.verify(key, Buffer.from(message.Signature, 'base64'));
      } catch {
        ok = false;
      }
      if (!ok) throw new IntakeRejected('SNS signature does not match');
    },
  };
}
