import type { Readable } from 'node:stream';
import type { ByteRange, FileStore } from './file-store.js';

/**
 * A file store made at its first use. The S3 store's module pulls in the AWS SDK (tens of MB and
 * a few hundred ms at start), which a process that never touches a file should not pay for.
 * A failed load is not kept: the next use tries again.
 */
export class LazyStore implements FileStore {
  private store: Promise<FileStore> | null = null;

  constructor(private readonly make: () => Promise<FileStore>) {}

  private loaded(): Promise<FileStore> {
    this.store ??= this.make().catch((error: unknown) => {
      this.store = null;
      throw error;
    });
    return this.store;
  }

  async write(key: string, source: Readable): Promise<void> {
    return (await this.loaded()).write(key, source);
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    return (await this.loaded()).read(key, range);
  }

  async remove(key: string): Promise<void> {
    return (await this.loaded()).remove(key);
  }

  async close(): Promise<void> {
    // Never used means nothing to close, and nothing worth loading just to close it.
    const store = this.store;
    this.store = null;
    if (store) await (await store.catch(() => null))?.close();
  }
}
