import { randomUUID } from 'node:crypto';
import { isBase64, jsonBody, startFake, type FakeRequest, type FakeServer } from './server.js';

/**
 * Postmark's Email API as its documentation describes it (postmarkapp.com/developer/api/email,
 * /api/overview "API error codes"): `X-Postmark-Server-Token` checked (401, ErrorCode 10),
 * JSON required (ErrorCode 409) and parsed (402), From, To and a body required (300),
 * attachments decoded from base64 (300 otherwise); 200 with a MessageID. `GET /server` for the
 * credentials test. `sent` holds each accepted email with its attachments decoded.
 * `inactive`: addresses Postmark has deactivated. A request naming only those is refused (422,
 * ErrorCode 406); one naming others too is accepted for them with Postmark's partial wording
 * (200, ErrorCode 0, "Message OK, but will not deliver to these inactive addresses: …", as
 * django-anymail parses it).
 */

export interface PostmarkSent {
  json: Record<string, unknown>;
  messageId: string;
  attachments: Array<{ name: string; contentType: string; content: Buffer }>;
}

export interface PostmarkFake extends FakeServer {
  token: string;
  sent: PostmarkSent[];
  inactive: Set<string>;
}

const ADDRESS = /[^\s<>",]+@[^\s<>",]+/g;
const addressesIn = (v: unknown): string[] => (typeof v === 'string' ? (v.match(ADDRESS) ?? []) : []);

const error = (status: number, code: number, message: string) => ({ status, body: { ErrorCode: code, Message: message } });

export async function startPostmark(token = 'pm-server-token-1'): Promise<PostmarkFake> {
  const sent: PostmarkSent[] = [];
  const inactive = new Set<string>();
  const handle = (req: FakeRequest) => {
    if (req.headers['x-postmark-server-token'] !== token)
      return error(
        401,
        10,
        'No Account or Server API tokens were supplied in the HTTP headers. Please ' +
          'add a header for either X-Postmark-Server-Token or X-Postmark-Account-Token.',
      );
    if (req.method === 'GET' && req.path === '/server')
      return { status: 200, body: { ID: 1, Name: 'Fake server', ApiTokens: [token], Color: 'blue', DeliveryType: 'Live' } };
    if (req.method !== 'POST' || req.path !== '/email') return { status: 404, body: '' };
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) return error(422, 409, 'JSON required');
    const json = jsonBody(req);
    if (json === undefined) return error(422, 402, 'Invalid JSON');
    if (typeof json.From !== 'string' || json.From === '') return error(422, 300, "Invalid 'From' address: ''.");
    if (typeof json.To !== 'string' || json.To === '') return error(422, 300, "Invalid 'To' address: ''.");
    if (typeof json.HtmlBody !== 'string' && typeof json.TextBody !== 'string')
      return error(422, 300, 'Provide either email TextBody or HtmlBody or both.');
    const attachments: PostmarkSent['attachments'] = [];
    for (const a of Array.isArray(json.Attachments) ? json.Attachments : []) {
      const o = typeof a === 'object' && a !== null ? Object.fromEntries(Object.entries(a)) : {};
      if (typeof o.Name !== 'string' || !isBase64(o.Content))
        return error(422, 300, 'Invalid attachment content - illegal base64 string.');
      attachments.push({ name: o.Name, contentType: String(o.ContentType ?? ''), content: Buffer.from(o.Content, 'base64') });
    }
    const everyone = [json.To, json.Cc, json.Bcc].flatMap(addressesIn);
    const dead = everyone.filter((a) => inactive.has(a.toLowerCase()));
    if (dead.length > 0 && dead.length === everyone.length) {
      return error(
        422,
        406,
        `You tried to send to recipient(s) that have been marked as inactive. Found inactive addresses: ${dead.join(', ')}. ` +
          `Inactive recipients are ones that have generated a hard bounce, a spam complaint, or a manual suppression.`,
      );
    }
    const messageId = randomUUID();
    sent.push({ json, messageId, attachments });
    const message =
      dead.length === 0
        ? 'OK'
        : `Message OK, but will not deliver to these inactive addresses: ${dead.join(', ')}. Inactive ` +
          `recipients are ones that have generated a hard bounce, a spam complaint, or a manual suppression.`;
    return {
      status: 200,
      body: { To: json.To, SubmittedAt: new Date().toISOString(), MessageID: messageId, ErrorCode: 0, Message: message },
    };
  };
  const server = await startFake(handle);
  return Object.assign(server, { token, sent, inactive });
}
