import { randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Busboy } from '@fastify/busboy';
import { simpleParser, type ParsedMail } from 'mailparser';
import type { Closer } from '../../cleanup.js';

/**
 * A loopback Mailgun API built from its public reference (Sending: messages.mime; Domains:
 * GET /v3/domains/{name}; API Response Codes), checking what Mailgun checks before it queues:
 * - HTTP Basic `api:<key>`, else 401 with the plain-text body `Forbidden`;
 * - the domain in the path is the account's, else 404 `{"message":"Domain not found: …"}`;
 * - multipart/form-data, parsed properly (busboy): `to` present (repeated fields or commas) and
 *   `message` sent as a file part, else 400 `{"message":"'to' parameter is missing"}` and the like;
 * - the MIME parsed with mailparser, attachments kept as bytes for the tests to compare.
 * It answers `{"id":"<message-id>","message":"Queued. Thank you."}` (the MIME's own Message-ID,
 * as Mailgun keeps it), the domain for the lookup, or the next scripted answer.
 */

export interface MailgunAccount {
  domain: string;
  apiKey: string;
}

export interface MailgunReceived {
  to: string[];
  /** `v:` fields by name (without the prefix). */
  variables: Record<string, string>;
  /** Every other field, `o:`/`h:` options included. */
  fields: Record<string, string[]>;
  mime: Buffer;
  filename: string;
  parsed: ParsedMail;
  id: string;
}

export interface MailgunAnswer {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

export interface MailgunFake {
  url: string;
  received: MailgunReceived[];
  requests: Array<{ method: string; path: string; status: number }>;
  /** The domain's `state` in the lookup: active, unverified or disabled. */
  state: string;
  failNext(answer: MailgunAnswer, times?: number): void;
  close(): Promise<void>;
}

const json = (status: number, body: unknown): MailgunAnswer => ({
  status,
  body: JSON.stringify(body),
  headers: { 'content-type': 'application/json' },
});

function authorized(header: string | undefined, apiKey: string): boolean {
  const m = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header ?? '');
  if (m === null) return false;
  const given = Buffer.from(m[1]!, 'base64');
  const expected = Buffer.from(`api:${apiKey}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

interface Form {
  fields: Record<string, string[]>;
  files: Record<string, { bytes: Buffer; filename: string }>;
}

function parseForm(req: http.IncomingMessage): Promise<Form> {
  return new Promise((resolve, reject) => {
    const form: Form = { fields: {}, files: {} };
    const bb = Busboy({ headers: { ...req.headers, 'content-type': req.headers['content-type'] ?? '' } });
    bb.on('field', (name, value) => {
      form.fields[name] = [...(form.fields[name] ?? []), value];
    });
    bb.on('file', (name, stream, filename) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        form.files[name] = { bytes: Buffer.concat(chunks), filename };
      });
    });
    bb.on('finish', () => resolve(form));
    bb.on('error', reject);
    req.pipe(bb);
  });
}

export async function startMailgunFake(account: MailgunAccount, closer?: Closer): Promise<MailgunFake> {
  const queue: MailgunAnswer[] = [];
  const fake: MailgunFake = {
    url: '',
    received: [],
    requests: [],
    state: 'active',
    failNext(answer, times = 1) {
      for (let i = 0; i < times; i += 1) queue.push(answer);
    },
    close: async () => undefined,
  };
  async function handle(req: http.IncomingMessage, path: string): Promise<MailgunAnswer> {
    if (!authorized(req.headers.authorization, account.apiKey)) {
      req.resume();
      return { status: 401, body: 'Forbidden', headers: { 'content-type': 'text/plain' } };
    }
    const send = /^\/v3\/([^/]+)\/messages\.mime$/.exec(path);
    const lookup = /^\/v3\/domains\/([^/]+)$/.exec(path);
    const domain = decodeURIComponent(send?.[1] ?? lookup?.[1] ?? '');
    if (lookup !== null && req.method === 'GET') {
      if (domain !== account.domain) return json(404, { message: 'Domain not found' });
      const scripted = queue.shift();
      if (scripted !== undefined) return scripted;
      return json(200, {
        domain: { name: domain, state: fake.state, type: 'custom', spam_action: 'disabled' },
        receiving_dns_records: [],
        sending_dns_records: [],
      });
    }
    if (send === null || req.method !== 'POST') {
      req.resume();
      return json(404, { message: 'Not Found' });
    }
    if (domain !== account.domain) {
      req.resume();
      return json(404, { message: `Domain not found: ${domain}` });
    }
    if (!/^multipart\/form-data;\s*boundary=/i.test(req.headers['content-type'] ?? '')) {
      req.resume();
      return json(400, { message: 'Content-Type must be multipart/form-data' });
    }
    const form = await parseForm(req);
    const to = (form.fields.to ?? [])
      .flatMap((v) => v.split(','))
      .map((v) => v.trim())
      .filter((v) => v !== '');
    if (to.length === 0) return json(400, { message: "'to' parameter is missing" });
    const file = form.files.message;
    if (file === undefined) return json(400, { message: "'message' parameter is missing" });
    const scripted = queue.shift();
    if (scripted !== undefined) return scripted;
    const parsed = await simpleParser(file.bytes);
    const id =
      parsed.messageId ??
      `<${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}.${randomBytes(6).toString('hex')}@${domain}>`;
    const variables: Record<string, string> = {};
    const fields: Record<string, string[]> = {};
    for (const [name, values] of Object.entries(form.fields)) {
      if (name.startsWith('v:')) variables[name.slice(2)] = values.join(',');
      else if (name !== 'to') fields[name] = values;
    }
    fake.received.push({ to, variables, fields, mime: file.bytes, filename: file.filename, parsed, id });
    return json(200, { id, message: 'Queued. Thank you.' });
  }
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    void handle(req, path).then(
      (a) => {
        fake.requests.push({ method: req.method ?? '', path, status: a.status });
        res.writeHead(a.status, a.headers ?? { 'content-type': 'application/json' });
        res.end(a.body);
      },
      (error: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(error));
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  closer?.defer(() => fake.close());
  return fake;
}
