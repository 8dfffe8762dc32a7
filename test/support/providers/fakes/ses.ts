import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignatureV4 } from '@smithy/signature-v4';
import type { SourceData } from '@smithy/types';
import { simpleParser, type ParsedMail } from 'mailparser';
import type { Closer } from '../../cleanup.js';

/**
 * A loopback SES v2 endpoint built from the public API reference (SendEmail, GetAccount,
 * restJson1 errors with `x-amzn-ErrorType`), checking what SES checks before it acts:
 * - the SigV4 signature, recomputed with @smithy/signature-v4 from the credentials the test
 *   configured, over the headers the request says it signed; the key id, region, service and
 *   date of the credential scope; `x-amz-content-sha256` against the body's own hash (the signer
 *   trusts that header, so recomputing alone would not prove the body was covered);
 * - a wrong key id → 403 UnrecognizedClientException, a wrong signature → 403
 *   SignatureDoesNotMatch, each with the documented wording.
 * It answers `{"MessageId": …}`, the account for GetAccount, or the next scripted error.
 */

export interface SesCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

/** SendEmail's body as it comes over the wire (Content.Raw.Data is base64). */
export interface SendEmailWire {
  FromEmailAddress?: string;
  Destination?: { ToAddresses?: string[]; CcAddresses?: string[]; BccAddresses?: string[] };
  Content?: { Raw?: { Data?: string } };
  ConfigurationSetName?: string;
  EmailTags?: Array<{ Name: string; Value: string }>;
}

export interface SesReceived {
  body: SendEmailWire;
  mime: Buffer;
  parsed: ParsedMail;
  messageId: string;
}

/** An error as SES answers it: status, `x-amzn-ErrorType` and `{"message": …}`. */
export interface SesError {
  status: number;
  type: string;
  message: string;
}

export interface SesFake {
  url: string;
  received: SesReceived[];
  /** Every request, in order: `POST /v2/email/outbound-emails`, `GET /v2/email/account`, refusals included. */
  requests: Array<{ method: string; path: string; status: number }>;
  /** The next send (or GetAccount) answers this error instead, once per call. */
  failNext(error: SesError, times?: number): void;
  /** GetAccount's answer. */
  account: Record<string, unknown>;
  /** Each answer waits this long after the request arrived (a send in flight when the transport closes). */
  answerDelayMs: number;
  close(): Promise<void>;
}

class Sha256 {
  private readonly h;
  constructor(secret?: SourceData) {
    this.h = secret === undefined ? createHash('sha256') : createHmac('sha256', toBuffer(secret));
  }
  update(data: Uint8Array | string): void {
    this.h.update(typeof data === 'string' ? Buffer.from(data) : data);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.h.digest());
  }
}

function toBuffer(d: SourceData): Buffer {
  if (typeof d === 'string') return Buffer.from(d);
  if (d instanceof ArrayBuffer) return Buffer.from(d);
  return Buffer.from(d.buffer, d.byteOffset, d.byteLength);
}

const AUTH = new RegExp(
  '^AWS4-HMAC-SHA256 Credential=([^/]+)/(\\d{8})/([^/]+)/([^/]+)/aws4_request, ' +
    'SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$',
);

function parseAmzDate(v: string): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(v);
  return m === null ? undefined : new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!));
}

const one = (v: string | string[] | undefined): string => (Array.isArray(v) ? v.join(',') : (v ?? ''));

/** Undefined when the signature holds; otherwise the documented refusal. */
async function checkSignature(
  req: http.IncomingMessage,
  body: Buffer,
  creds: SesCredentials,
  port: number,
): Promise<SesError | undefined> {
  const m = AUTH.exec(one(req.headers.authorization));
  const amzDate = one(req.headers['x-amz-date']);
  const date = parseAmzDate(amzDate);
  if (m === null || date === undefined)
    return { status: 403, type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const [, keyId, day, region, svc, signedList] = m;
  if (keyId !== creds.accessKeyId)
    return {
      status: 403,
      type: 'UnrecognizedClientException',
      message: 'The security token included in the request is invalid.',
    };
  if (region !== creds.region || svc !== 'ses' || day !== amzDate.slice(0, 8)) {
    return {
      status: 403,
      type: 'SignatureDoesNotMatch',
      message: `Credential should be scoped to a valid region, service and date (got ${day}/${region}/${svc}).`,
    };
  }
  const bodyHash = createHash('sha256').update(body).digest('hex');
  const claimed = one(req.headers['x-amz-content-sha256']);
  if (claimed !== '' && claimed !== bodyHash)
    return {
      status: 400,
      type: 'XAmzContentSHA256Mismatch',
      message: "The provided 'x-amz-content-sha256' header does not match what was computed.",
    };
  const signed = new Set(signedList!.split(';'));
  if (!signed.has('host') || !signed.has('x-amz-date'))
    return { status: 403, type: 'SignatureDoesNotMatch', message: 'host and x-amz-date must be signed' };
  const headers: Record<string, string> = {};
  for (const name of signed) headers[name] = one(req.headers[name]);
  const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  const signer = new SignatureV4({
    credentials: { accessKeyId: creds.accessKeyId, secretAccessKey: creds.secretAccessKey },
    region: creds.region,
    service: 'ses',
    sha256: Sha256,
  });
  const again = await signer.sign(
    {
      method: req.method ?? 'GET',
      protocol: 'http:',
      hostname: '127.0.0.1',
      port,
      path: url.pathname,
      query,
      headers,
      body,
    },
    { signingDate: date, signableHeaders: signed },
  );
  const expected = Buffer.from(String(again.headers.authorization ?? ''));
  const given = Buffer.from(one(req.headers.authorization));
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    return {
      status: 403,
      type: 'SignatureDoesNotMatch',
      message:
        'The request signature we calculated does not match the signature you provided. Check ' +
        'your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    };
  }
  return undefined;
}

export async function startSesFake(creds: SesCredentials, closer?: Closer): Promise<SesFake> {
  const queue: SesError[] = [];
  const fake: SesFake = {
    url: '',
    received: [],
    requests: [],
    answerDelayMs: 0,
    account: {
      SendingEnabled: true,
      ProductionAccessEnabled: true,
      EnforcementStatus: 'HEALTHY',
      SendQuota: { Max24HourSend: 50000, MaxSendRate: 14, SentLast24Hours: 0 },
    },
    failNext(error, times = 1) {
      for (let i = 0; i < times; i += 1) queue.push(error);
    },
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answered = handle(req, Buffer.concat(chunks));
      const delayed =
        fake.answerDelayMs > 0
          ? answered.then(async (a) => {
              await new Promise((r) => setTimeout(r, fake.answerDelayMs));
              return a;
            })
          : answered;
      void delayed.then(({ status, body, type }) => {
        const path = new URL(req.url ?? '/', 'http://x').pathname;
        fake.requests.push({ method: req.method ?? '', path, status });
        res.writeHead(status, {
          'content-type': 'application/json',
          'x-amzn-requestid': randomUUID(),
          ...(type !== undefined ? { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazonaws.sesv2/` } : {}),
        });
        res.end(JSON.stringify(body));
      });
    });
  });
  const error = (e: SesError) => ({ status: e.status, type: e.type, body: { message: e.message } });
  async function handle(req: http.IncomingMessage, body: Buffer): Promise<{ status: number; body: unknown; type?: string }> {
    const refused = await checkSignature(req, body, creds, port);
    if (refused !== undefined) return error(refused);
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'GET' && path === '/v2/email/account') {
      const scripted = queue.shift();
      return scripted !== undefined ? error(scripted) : { status: 200, body: fake.account };
    }
    if (req.method !== 'POST' || path !== '/v2/email/outbound-emails')
      return error({ status: 404, type: 'NotFoundException', message: `no route ${req.method} ${path}` });
    if (!/^application\/json\b/.test(one(req.headers['content-type'])))
      return error({ status: 400, type: 'SerializationException', message: 'expected JSON' });
    const wire = JSON.parse(body.toString('utf8')) as SendEmailWire;
    const data = wire.Content?.Raw?.Data;
    if (typeof data !== 'string' || data === '')
      return error({ status: 400, type: 'BadRequestException', message: 'Content is required' });
    const scripted = queue.shift();
    if (scripted !== undefined) return error(scripted);
    const mime = Buffer.from(data, 'base64');
    const messageId = `0100018c${randomUUID().replaceAll('-', '').slice(0, 8)}-${randomUUID()}-000000`;
    fake.received.push({ body: wire, mime, parsed: await simpleParser(mime), messageId });
    return { status: 200, body: { MessageId: messageId } };
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  fake.url = `http://127.0.0.1:${port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  closer?.defer(() => fake.close());
  return fake;
}
