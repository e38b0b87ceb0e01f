import type { FileHandle } from 'node:fs/promises';
import fsp from 'node:fs/promises';
import { Writable } from 'node:stream';

/** Bytes between two data syncs started while the file is still being written. */
const SYNC_EVERY = 16 * 1024 * 1024;
/** Bytes buffered before the writer asks its source to wait; one writev takes them all. */
const BUFFER_BYTES = 1024 * 1024;

/**
 * Writes a new file (it must not exist) and has it on the disk, not only in the page cache, by
 * the time the stream finishes. A data sync starts every SYNC_EVERY bytes (one at a time) while
 * later bytes keep arriving, so the last sync has little left to flush: syncing only at the end,
 * as `createWriteStream({flush: true})` does, would hold a 200 MB upload's answer for the whole
 * write-back.
 */
export class DurableFileWriter extends Writable {
  private handle: FileHandle | null = null;
  private written = 0;
  private syncedUpTo = 0;
  private syncing: Promise<void> | null = null;
  private syncError: unknown = null;

  constructor(private readonly file: string) {
    super({ highWaterMark: BUFFER_BYTES });
  }

  override _construct(callback: (error?: Error | null) => void): void {
    // Readable by this user only: it holds what someone uploaded.
    fsp.open(this.file, 'wx', 0o600).then((handle) => {
      this.handle = handle;
      callback();
    }, callback);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this._writev([{ chunk }], callback);
  }

  override _writev(chunks: { chunk: Buffer }[], callback: (error?: Error | null) => void): void {
    const buffers = chunks.map(({ chunk }) => chunk);
    const expected = buffers.reduce((sum, buffer) => sum + buffer.length, 0);
    this.handle!.writev(buffers).then(({ bytesWritten }) => {
      if (bytesWritten !== expected) throw new Error(`short write to ${this.file}: ${bytesWritten} of ${expected} bytes`);
      this.written += bytesWritten;
      if (this.written - this.syncedUpTo >= SYNC_EVERY && !this.syncing) this.startSync();
      callback();
    }).catch(callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    (async () => {
      await this.syncing;
      if (this.syncError) throw this.syncError;
      await this.handle!.sync();
      await this.handle!.close();
      this.handle = null;
    })().then(() => callback(), callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const handle = this.handle;
    this.handle = null;
    // A sync in flight holds the handle: close it after.
    Promise.resolve(this.syncing).then(() => handle?.close()).then(() => callback(error), () => callback(error));
  }

  private startSync(): void {
    const upTo = this.written;
    this.syncing = this.handle!.datasync().then(
      () => {
        this.syncedUpTo = upTo;
      },
      (error: unknown) => {
        this.syncError ??= error;
      },
    ).finally(() => {
      this.syncing = null;
    });
  }
}
