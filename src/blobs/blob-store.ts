/** Where upload URLs point and what the client must send with its PUT. */
export interface PresignedPut {
  url: string;
  method: 'PUT';
  headers: Record<string, string>;
}

/**
 * Attachment bytes live here, never in the database. Two implementations: the local disk under
 * the data directory (the service itself answers the signed PUT URL) and any S3-compatible
 * store (the bucket answers it).
 */
export interface BlobStore {
  /**
   * A URL that accepts exactly one PUT of exactly `size` bytes for `expiry.inMs`, that is until
   * `expiry.at` on the service's clock (the disk store signs the instant; S3 counts the duration
   * on its own clock).
   */
  presignPut(
    key: string,
    size: number,
    contentType: string | undefined,
    expiry: { at: number; inMs: number },
  ): Promise<PresignedPut>;
  /** The size of a stored blob, or undefined when nothing was uploaded under the key. */
  size(key: string): Promise<number | undefined>;
  put(key: string, bytes: Buffer, contentType: string | undefined): Promise<void>;
  get(key: string): Promise<Buffer>;
  delete(key: string): Promise<void>;
}
