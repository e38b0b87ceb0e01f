import { randomUUID } from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DurableFileWriter } from './durable-file-writer.js';
import { closed } from './stream-closed.js';
import { checkKey, type ByteRange, type FileStore } from './file-store.js';

const READ_BYTES = 256 * 1024;
/** A temporary file untouched this long belongs to an upload that died with its process. */
const STALE_TEMP_MS = 60 * 60 * 1000;

/**
 * Files on the local disk: `<root>/objects/<key>`. Content is written to `<root>/tmp` first,
 * synced to the disk, then renamed into place (same file system, so the rename is atomic): a
 * crash or an interrupted upload never leaves a half file under a key.
 */
export class DiskStore implements FileStore {
  private readonly objects: string;
  private readonly temp: string;
  private prepared: Promise<void> | null = null;

  constructor(root: string) {
    this.objects = path.join(root, 'objects');
    this.temp = path.join(root, 'tmp');
  }

  async write(key: string, source: Readable): Promise<void> {
    const final = this.pathOf(key);
    await this.prepare();
    const temp = path.join(this.temp, `${randomUUID()}.part`);
    const writer = new DurableFileWriter(temp);
    try {
      // On the disk before the rename, so the name never points at content still only in memory.
      await pipeline(source, writer);
      await fsp.mkdir(path.dirname(final), { recursive: true, mode: 0o700 });
      await fsp.rename(temp, final);
    } catch (error) {
      await closed(writer);
      await fsp.rm(temp, { force: true });
      throw error;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    // Opened before anything is answered, so a missing file fails here, not halfway through a reply.
    const handle = await fsp.open(this.pathOf(key), 'r');
    // Reads of 256 KiB: fewer trips through the thread pool, still little memory per download.
    return handle.createReadStream({ highWaterMark: READ_BYTES, ...(range ? { start: range.start, end: range.end } : {}) });
  }

  async remove(key: string): Promise<void> {
    await fsp.rm(this.pathOf(key), { force: true });
  }

  async close(): Promise<void> {}

  private pathOf(key: string): string {
    return path.join(this.objects, ...checkKey(key).split('/'));
  }

  /** Once per process: the folders, and no temporary files left by uploads a crash cut short. */
  private prepare(): Promise<void> {
    this.prepared ??= (async () => {
      // Only the service's own user may read what people uploaded (files are written 0600).
      await fsp.mkdir(this.objects, { recursive: true, mode: 0o700 });
      await fsp.mkdir(this.temp, { recursive: true, mode: 0o700 });
      const now = Date.now();
      for (const name of await fsp.readdir(this.temp)) {
        const file = path.join(this.temp, name);
        const stat = await fsp.stat(file).catch(() => null);
        if (stat && now - stat.mtimeMs > STALE_TEMP_MS) await fsp.rm(file, { force: true });
      }
    })().catch((error: unknown) => {
      this.prepared = null;
      throw error;
    });
    return this.prepared;
  }
}
