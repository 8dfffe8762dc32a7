/**
 * The attachments of a send as acceptance takes them, whatever the wire form: the JSON body's
 * items (src/send/request.ts checks them against its schema first) or a multipart form's files
 * (src/http/form-reader.ts). Plain types of their own, so that attachments/ depends on no route
 * or request shape.
 */

/** Bytes in the request, base64 (JSON bodies). */
export interface InlineAttachmentInput {
  filename: string;
  content_type?: string | undefined;
  content_base64: string;
}

/** A file uploaded earlier through POST /v1/uploads, named by its id. */
export interface UploadedAttachmentInput {
  upload_id: string;
}

/** A file part of a multipart form: bytes already read, not base64. */
export interface FileAttachment {
  filename: string;
  content_type: string | undefined;
  bytes: Buffer;
}

export type AttachmentInput = InlineAttachmentInput | UploadedAttachmentInput | FileAttachment;
