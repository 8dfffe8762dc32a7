import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { PLAN_ATTACHMENT_LIMIT, blockedReason, cleanFilename } from '../../attachments/policy.js';
import type { BlobStore } from '../../blobs/blob-store.js';
import { verifyUpload } from '../../blobs/signing.js';
import { newId } from '../../domain/ids.js';
import { ApiError } from '../../errors/api-error.js';
import { admitCaller } from '../../send/permissions.js';
import type { Protection } from '../../protection/index.js';
import type { App, AppServices } from '../app-types.js';
import { authenticate } from '../auth.js';
import { clientInfo } from '../headers.js';
import { responses, Timestamp } from '../schemas.js';
import { iso } from '../time.js';

/** Spec: the presigned URL is good for 15 minutes, the upload itself for 24 hours. */
export const UPLOAD_URL_TTL_MS = 15 * 60_000;
export const UPLOAD_TTL_MS = 24 * 60 * 60_000;
/** Spec, Limits: public uploads share 200 × the plan's attachment limit per organization per day. */
export const PUBLIC_UPLOAD_BUDGET_FACTOR = 200;

const UploadBody = Type.Object({
  filename: Type.String({ minLength: 1, maxLength: 255 }),
  content_type: Type.Optional(Type.String({ maxLength: 255 })),
  size: Type.Integer({ minimum: 1, description: 'Exact size in bytes; signed into the URL' }),
  user_id: Type.Optional(Type.String({ maxLength: 200 })),
});

const UploadResource = Type.Object({
  upload_id: Type.String(),
  url: Type.String({ format: 'uri' }),
  method: Type.Literal('PUT'),
  headers: Type.Record(Type.String(), Type.String()),
  expires_at: Timestamp,
});

const startOfUtcDay = (ms: number) => ms - (ms % 86_400_000);

export interface UploadRouteDeps extends Omit<AppServices, 'blobs' | 'protection'> {
  blobs: BlobStore;
  /** The flood guard, origin and headless rules of public keys apply to uploads too. */
  protection: Protection;
  /** Secret of the disk store's signed URLs; undefined when the blob store signs its own (S3). */
  uploadSecret: string | undefined;
}

/**
 * POST /v1/uploads hands out a presigned PUT URL for one file of an exact size, and, with the
 * disk blob store, PUT /v1/uploads/{id}/content is that URL.
 */
export function registerUploads(app: App, deps: UploadRouteDeps): void {
  const { store, clock, blobs } = deps;

  app.post(
    '/v1/uploads',
    {
      schema: {
        tags: ['uploads'],
        summary: 'Get a presigned URL to upload one attachment',
        security: [{ publicKey: [] }, { privateKey: [] }],
        body: UploadBody,
        response: responses({ 201: UploadResource }, [
          'invalid_body',
          'unauthorized',
          'invalid_public_key',
          'invalid_private_key',
          'origin_not_allowed',
          'attachments_not_allowed',
          'attachment_too_large',
          'rate_limited',
        ]),
      },
    },
    async (request, reply) => {
      const caller = await authenticate(request, store, request.body);
      await admitCaller(caller, clientInfo(request), deps.protection);
      const { org, key } = caller;
      const filename = cleanFilename(request.body.filename);
      const limit = PLAN_ATTACHMENT_LIMIT[org.plan];
      if (limit === 0)
        throw new ApiError('attachments_not_allowed', {
          message: 'The plan has no attachment allowance.',
          details: { reason: 'plan' },
        });
      const blocked = blockedReason(filename, undefined);
      if (blocked !== undefined)
        throw new ApiError('attachments_not_allowed', { message: blocked, details: { reason: 'file_type' } });
      if (request.body.size > limit) {
        throw new ApiError('attachment_too_large', {
          message: `The plan allows ${limit} bytes of attachments per message.`,
          details: { limit },
        });
      }
      const now = clock.now();
      if (key.type === 'public') {
        if (!(await store.templates.anyAllowsAttachments(org.id))) {
          throw new ApiError('attachments_not_allowed', {
            message: 'No template of this organization accepts attachments.',
            details: { reason: 'no_template' },
          });
        }
        await deps.protection.limits.countClientOnly(caller, clientInfo(request));
        const budget = PUBLIC_UPLOAD_BUDGET_FACTOR * limit;
        const used = await store.uploads.publicBytesSince(org.id, startOfUtcDay(now));
        if (used + request.body.size > budget) {
          const retryAfter = Math.ceil((startOfUtcDay(now) + 86_400_000 - now) / 1000);
          throw new ApiError('rate_limited', {
            message: 'The daily budget of public uploads is used up.',
            details: { scope: 'uploadbytes', limit: budget, used },
            headers: { 'retry-after': String(retryAfter) },
          });
        }
      }
      const id = newId('up');
      const blobKey = `${org.id}/${id}`;
      const urlExpiresAt = now + UPLOAD_URL_TTL_MS;
      const put = await blobs.presignPut(blobKey, request.body.size, request.body.content_type, {
        at: urlExpiresAt,
        inMs: UPLOAD_URL_TTL_MS,
      });
      await store.uploads.insert({
        id,
        org_id: org.id,
        filename,
        content_type: request.body.content_type ?? null,
        size: request.body.size,
        blob_key: blobKey,
        key_type: key.type,
        created_at: now,
        url_expires_at: urlExpiresAt,
        expires_at: now + UPLOAD_TTL_MS,
      });
      return reply
        .code(201)
        .send({ upload_id: id, url: put.url, method: 'PUT' as const, headers: put.headers, expires_at: iso(urlExpiresAt) });
    },
  );

  if (deps.uploadSecret === undefined) return;
  const secret = deps.uploadSecret;
  // The disk store's upload URL: its own parser takes any content type as raw bytes, capped at
  // the largest plan allowance, then the signed size is checked exactly.
  const maxUpload = Math.max(...Object.values(PLAN_ATTACHMENT_LIMIT));
  app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxUpload }, (_request, body, done) => done(null, body));
    scope.put(
      '/v1/uploads/:id/content',
      {
        schema: {
          hide: true,
          params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
          querystring: Type.Object({ expires: Type.Integer(), sig: Type.String({ maxLength: 200 }) }),
        },
      },
      async (request, reply) => {
        const upload = await store.uploads.byId(request.params.id);
        const denied = (message: string) => new ApiError('forbidden', { message });
        if (upload === undefined) throw denied('This upload URL is not valid.');
        const type = upload.content_type ?? 'application/octet-stream';
        const { expires, sig } = request.query;
        if (!verifyUpload(secret, upload.blob_key, upload.size, type, expires, sig))
          throw denied('This upload URL is not valid.');
        if (clock.now() > expires || expires !== upload.url_expires_at) throw denied('This upload URL has expired.');
        const body = request.body;
        if (!Buffer.isBuffer(body) || body.length !== upload.size) {
          throw new ApiError('bad_request', {
            message: `The upload must be exactly ${upload.size} bytes.`,
            details: { expected: upload.size, received: Buffer.isBuffer(body) ? body.length : 0 },
          });
        }
        const used = () => new ApiError('conflict', { message: 'This upload URL was already used.' });
        if (upload.status !== 'pending') throw used();
        // The disk store never overwrites a blob, so of two racing PUTs one fails here.
        await blobs.put(upload.blob_key, body, upload.content_type ?? undefined).catch(() => {
          throw used();
        });
        await store.uploads.markUploaded(upload.id, clock.now());
        return reply.code(200).send({ upload_id: upload.id, size: upload.size });
      },
    );
  });
}
