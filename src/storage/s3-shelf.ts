import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, NoSuchKey, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import type { S3Settings } from '../config.js';
import { checkArchiveName, type ArchiveShelf, type ShelvedArchive } from './archive-shelf.js';
import { makeS3Client } from './s3-store.js';

/** The prefix of backup archives in the bucket; file content keys (`ws_…/…`) never start with it. */
const PREFIX = 'backups/';

/** Backup archives under `backups/` in the file store's bucket; staged in a local folder first. */
export class S3Shelf implements ArchiveShelf {
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(settings: S3Settings, readonly stagingDir: string) {
    this.bucket = settings.bucket;
    this.client = makeS3Client(settings);
  }

  async list(): Promise<ShelvedArchive[]> {
    const archives: ShelvedArchive[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: PREFIX, ContinuationToken: token }));
      for (const object of page.Contents ?? []) {
        const name = object.Key!.slice(PREFIX.length);
        if (!name.includes('/')) archives.push({ name, size: object.Size ?? 0 });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return archives;
  }

  async put(name: string, file: string): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: PREFIX + checkArchiveName(name), Body: fs.createReadStream(file) },
      partSize: 8 * 1024 * 1024,
      queueSize: 2,
      leavePartsOnError: false,
    });
    await upload.done();
    await fs.promises.rm(file, { force: true });
  }

  async read(name: string): Promise<{ content: Readable; size: number } | null> {
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: PREFIX + checkArchiveName(name) }));
      return { content: object.Body as Readable, size: object.ContentLength ?? 0 };
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return null;
      throw error;
    }
  }

  async remove(name: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: PREFIX + checkArchiveName(name) }));
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
