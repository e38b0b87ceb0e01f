import { DeleteObjectCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { Readable } from 'node:stream';
import type { S3Settings } from '../config.js';
import { checkKey, type ByteRange, type FileStore } from './file-store.js';

/**
 * Parts of a multipart upload: S3's smallest. At most PARTS_IN_FLIGHT are buffered at once, so
 * an upload holds about 20 MiB of memory whatever the file's size.
 */
const PART_BYTES = 5 * 1024 * 1024;
const PARTS_IN_FLIGHT = 4;

/** A client for the configured bucket (the file store's and the backups' shelf's). */
export function makeS3Client(settings: S3Settings): S3Client {
  return new S3Client({
    region: settings.region,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    forcePathStyle: settings.forcePathStyle,
    ...(settings.accessKeyId && settings.secretAccessKey
      ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } }
      : {}),
    // Recent SDKs add CRC32 checksums to every upload (aws-chunked bodies with trailers), which
    // many S3-compatible stores do not understand. Plainbase checks content itself (SHA-256),
    // so checksums are sent and checked only where an operation requires them.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/**
 * Files in an S3 bucket (AWS or any S3-compatible store), through the AWS SDK. An object appears
 * only when its upload completes, so a failed upload leaves no object; its parts are aborted.
 */
export class S3Store implements FileStore {
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(settings: S3Settings) {
    this.bucket = settings.bucket;
    this.client = makeS3Client(settings);
  }

  async write(key: string, source: Readable): Promise<void> {
    // The SDK reports a failed abort rather than why the upload stopped; the source's own error
    // (over the size limit, client gone) is the one that matters.
    let sourceError: unknown = null;
    source.once('error', (error) => (sourceError ??= error));
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: checkKey(key), Body: source },
      partSize: PART_BYTES,
      queueSize: PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      source.destroy();
      throw sourceError ?? error;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const response = await this.client.send(new GetObjectCommand({
      Bucket: this.bucket,
      Key: checkKey(key),
      ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
    }));
    return response.Body as Readable;
  }

  async remove(key: string): Promise<void> {
    // S3 answers a delete of a missing key with success, as this interface wants.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: checkKey(key) }));
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
