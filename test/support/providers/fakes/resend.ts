import { randomUUID } from 'node:crypto';
import { isBase64, jsonBody, startFake, type FakeRequest, type FakeServer } from './server.js';

/**
 * Resend's API as documented (resend.com/docs/api-reference/emails/send-email, /errors):
 * `Authorization: Bearer <key>` (401 missing_api_key / 403 invalid_api_key), JSON with from,
 * to (1–50), subject, base64 attachments (422 invalid_attachment), an Idempotency-Key of 1–256
 * chars (400 invalid_idempotency_key) that answers the first id again for the same payload and
 * 409 invalid_idempotent_request for another; 200 `{ id }`. `GET /domains` for the credentials test.
 */

export interface ResendSent {
  json: Record<string, unknown>;
  id: string;
  idempotencyKey: string | undefined;
  attachments: Array<{ filename: string; contentType: string | undefined; content: Buffer }>;
}

export interface ResendFake extends FakeServer {
  key: string;
  sent: ResendSent[];
}

const error = (statusCode: number, name: string, message: string) => ({
  status: statusCode,
  body: { statusCode, name, message },
});

export async function startResend(key = 're_fake_key_1'): Promise<ResendFake> {
  const sent: ResendSent[] = [];
  const byKey = new Map<string, { payload: string; id: string }>();
  const handle = (req: FakeRequest) => {
    const auth = req.headers.authorization;
    if (auth === undefined) return error(401, 'missing_api_key', 'Missing API key in the authorization header.');
    if (auth !== `Bearer ${key}`) return error(403, 'invalid_api_key', 'API key is invalid');
    if (req.method === 'GET' && req.path === '/domains')
      return { status: 200, body: { data: [{ id: randomUUID(), name: 'acme.test', status: 'verified' }] } };
    if (req.method !== 'POST' || req.path !== '/emails') return error(404, 'not_found', 'The requested endpoint does not exist.');
    const idem = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : undefined;
    if (idem !== undefined && (idem.length < 1 || idem.length > 256))
      return error(400, 'invalid_idempotency_key', 'The key must be between 1-256 chars.');
    const payload = req.body.toString('utf8');
    const earlier = idem === undefined ? undefined : byKey.get(idem);
    if (earlier !== undefined)
      return earlier.payload === payload
        ? { status: 200, body: { id: earlier.id } }
        : error(409, 'invalid_idempotent_request', 'Same idempotency key used with a different request payload.');
    const json = jsonBody(req);
    if (json === undefined) return error(422, 'validation_error', 'Invalid JSON');
    if (typeof json.from !== 'string') return error(422, 'missing_required_field', 'The `from` field is missing.');
    if (!Array.isArray(json.to) || json.to.length === 0 || json.to.length > 50)
      return error(
        422,
        'validation_error',
        'Invalid `to` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.',
      );
    if (typeof json.subject !== 'string') return error(422, 'missing_required_field', 'The `subject` field is missing.');
    const attachments: ResendSent['attachments'] = [];
    for (const a of Array.isArray(json.attachments) ? json.attachments : []) {
      const o = typeof a === 'object' && a !== null ? Object.fromEntries(Object.entries(a)) : {};
      if (!isBase64(o.content) || typeof o.filename !== 'string')
        return error(422, 'invalid_attachment', 'Attachment must have either a `content` or `path`.');
      attachments.push({
        filename: o.filename,
        contentType: typeof o.content_type === 'string' ? o.content_type : undefined,
        content: Buffer.from(o.content, 'base64'),
      });
    }
    const id = randomUUID();
    if (idem !== undefined) byKey.set(idem, { payload, id });
    sent.push({ json, id, idempotencyKey: idem, attachments });
    return { status: 200, body: { id } };
  };
  const server = await startFake(handle);
  return Object.assign(server, { key, sent });
}
