import { randomBytes } from 'node:crypto';
import { isBase64, jsonBody, startFake, type FakeRequest, type FakeServer } from './server.js';

/**
 * SendGrid's v3 Mail Send as documented (twilio.com/docs/sendgrid/api-reference/mail-send and its
 * errors page): `Authorization: Bearer <key>` (401 otherwise), JSON with personalizations (each
 * with a non-empty `to`), from, subject, non-empty content values, each address once across the
 * request, base64 attachments; 202 with an empty body and `X-Message-Id`. `GET /v3/scopes` for
 * the credentials test, answering the key's scopes.
 */

export interface SendgridSent {
  json: Record<string, unknown>;
  messageId: string;
  attachments: Array<{ filename: string; type: string; content: Buffer }>;
}

export interface SendgridFake extends FakeServer {
  key: string;
  scopes: string[];
  sent: SendgridSent[];
}

const fieldError = (message: string, field: string | null) => ({
  status: 400,
  body: { errors: [{ message, field, help: null }] },
});
const records = (v: unknown): Array<Record<string, unknown>> =>
  Array.isArray(v)
    ? v.filter((x) => typeof x === 'object' && x !== null).map((x: object) => Object.fromEntries(Object.entries(x)))
    : [];

export async function startSendgrid(key = 'SG.fake-key-1'): Promise<SendgridFake> {
  const sent: SendgridSent[] = [];
  const scopes = ['mail.send', 'scopes.read'];
  const handle = (req: FakeRequest) => {
    if (req.headers.authorization !== `Bearer ${key}`)
      return {
        status: 401,
        body: { errors: [{ field: null, message: 'The provided authorization grant is invalid, expired, or revoked' }] },
      };
    if (req.method === 'GET' && req.path === '/v3/scopes') return { status: 200, body: { scopes } };
    if (req.method !== 'POST' || req.path !== '/v3/mail/send')
      return { status: 404, body: { errors: [{ field: null, message: 'not found' }] } };
    const json = jsonBody(req);
    if (json === undefined) return fieldError('Bad Request', null);
    const personalizations = records(json.personalizations);
    if (personalizations.length === 0)
      return fieldError('The personalizations field is required and must have at least one personalization.', 'personalizations');
    const seen = new Set<string>();
    for (const p of personalizations) {
      if (records(p.to).length === 0)
        return fieldError(
          'The to array is required for all personalization objects, and ' +
            'must have at least one email object with a valid email address.',
          'personalizations.0.to',
        );
      for (const r of [...records(p.to), ...records(p.cc), ...records(p.bcc)]) {
        const email = String(r.email ?? '').toLowerCase();
        if (seen.has(email))
          return fieldError(
            'Each email address in the personalization block should be unique between to, cc, and bcc.',
            'personalizations.0',
          );
        seen.add(email);
      }
    }
    if (typeof records([json.from])[0]?.email !== 'string')
      return fieldError('The from object must be provided for every email send.', 'from');
    if (typeof json.subject !== 'string' || json.subject === '') return fieldError('The subject is required.', 'subject');
    const content = records(json.content);
    if (content.length === 0 || content.some((c) => typeof c.value !== 'string' || c.value === ''))
      return fieldError('The content value must be a string at least one character in length.', 'content.0.value');
    if (content[0]?.type !== 'text/plain' && content.some((c) => c.type === 'text/plain'))
      return fieldError('If present, text/plain content must be first.', 'content.0.type');
    const attachments: SendgridSent['attachments'] = [];
    for (const a of records(json.attachments)) {
      if (typeof a.filename !== 'string' || !isBase64(a.content))
        return fieldError('The attachment content must be base64 encoded.', 'attachments.0.content');
      attachments.push({ filename: a.filename, type: String(a.type ?? ''), content: Buffer.from(a.content, 'base64') });
    }
    const messageId = randomBytes(11).toString('base64url');
    sent.push({ json, messageId, attachments });
    return { status: 202, headers: { 'x-message-id': messageId } };
  };
  const server = await startFake(handle);
  return Object.assign(server, { key, scopes, sent });
}
