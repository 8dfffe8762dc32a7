import { Type, type Static } from '@sinclair/typebox';
import type { AttachmentInput } from '../attachments/input.js';
import type { ParamsSource } from '../templates/params.js';

/** Attachment item: inline bytes, or a reference to a file uploaded through POST /v1/uploads. */
export const InlineAttachment = Type.Object({
  filename: Type.String({ minLength: 1, maxLength: 255 }),
  content_type: Type.Optional(Type.String({ maxLength: 255 })),
  content_base64: Type.String({ minLength: 1 }),
});
export const UploadedAttachment = Type.Object({ upload_id: Type.String({ minLength: 1, maxLength: 64 }) });
export const Attachment = Type.Union([InlineAttachment, UploadedAttachment]);
export type Attachment = Static<typeof Attachment>;

/**
 * The Send request of the spec. Unknown top-level fields (the SDKs' `lib_version`) are kept
 * out of the way, not refused; `null` counts as absent (stripped before validation).
 */
export const SendBody = Type.Object(
  {
    service_id: Type.Optional(Type.String({ maxLength: 64 })),
    template_id: Type.String({ minLength: 1, maxLength: 64 }),
    user_id: Type.Optional(Type.String({ maxLength: 200 })),
    accessToken: Type.Optional(Type.String({ maxLength: 300 })),
    template_params: Type.Optional(Type.Object({}, { additionalProperties: true })),
    turnstile_token: Type.Optional(Type.String({ maxLength: 4096 })),
    turnstile_key: Type.Optional(Type.Union([Type.Literal('org'), Type.Literal('mail')])),
    attachments: Type.Optional(Type.Array(Attachment, { maxItems: 20 })),
  },
  { additionalProperties: true },
);
export type SendBody = Static<typeof SendBody>;

/** What the pipeline needs of a send, whatever the wire form (JSON, multipart, batch item). */
export interface SendInput {
  service_id: string | undefined;
  template_id: string;
  template_params: Record<string, unknown>;
  /** JSON keeps its types (a number is not a string); a form's values are all text. */
  params_source: ParamsSource;
  turnstile_token: string | undefined;
  turnstile_key: 'org' | 'mail' | undefined;
  attachments: AttachmentInput[];
}

export function sendInputFromBody(body: SendBody): SendInput {
  return {
    service_id: body.service_id,
    template_id: body.template_id,
    template_params: (body.template_params ?? {}) as Record<string, unknown>,
    params_source: 'json',
    turnstile_token: body.turnstile_token,
    turnstile_key: body.turnstile_key,
    attachments: body.attachments ?? [],
  };
}

/** `null` means "not sent" for every top-level field (clients serialise unset fields as null). */
export function stripNulls(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== null));
}

export const SendAccepted = Type.Object(
  {
    message_id: Type.String(),
    status: Type.Union([Type.Literal('queued'), Type.Literal('held')]),
    status_token: Type.String({ description: 'Credential for reading this message with a public key' }),
  },
  { $id: 'SendAccepted' },
);
export type SendAccepted = Static<typeof SendAccepted>;
