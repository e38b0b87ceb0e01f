import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { AppError } from '../../errors.js';

export const fileTooLarge = (maxBytes: number) =>
  new AppError('PAYLOAD_TOO_LARGE', `The file is larger than the limit of ${maxBytes} bytes.`, { maxBytes });

/**
 * Passes an upload through unchanged while counting its bytes and hashing them (SHA-256), so
 * the content is read once. Past `maxBytes` it fails with PAYLOAD_TOO_LARGE, and the store
 * discards what it had written.
 */
export class UploadMeter extends Transform {
  bytes = 0;
  private readonly hash = createHash('sha256');

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) return callback(fileTooLarge(this.maxBytes));
    this.hash.update(chunk);
    callback(null, chunk);
  }

  /** Lowercase hex; call once the stream has ended. */
  sha256(): string {
    return this.hash.digest('hex');
  }
}
