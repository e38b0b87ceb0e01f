import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { closed } from './stream-closed.js';

/**
 * A request body held on the local disk until it has arrived whole, so that work which must not
 * wait on the network (a database transaction) starts only once every byte is here. The file is
 * temporary: not synced, removed when done, and one left by a process that died is removed by
 * the next spool into the same folder after an hour.
 */
export interface SpooledFile {
  /** The bytes as they arrived, from the start. */
  read(): Readable;
  /** Removes the file; harmless twice. */
  remove(): Promise<void>;
}

const READ_BYTES = 256 * 1024;
const STALE_MS = 60 * 60 * 1000;

/** Folders this process has prepared (created, and swept of stale spools). */
const prepared = new Map<string, Promise<void>>();

/**
 * Writes `chunks` to a new file in `folder` and resolves once the last one is on disk. When the
 * source fails (a client gone, a limit passed) or the disk does, the file is removed and the
 * error thrown as it came.
 */
export async function spoolToFile(chunks: AsyncIterable<Buffer>, folder: string): Promise<SpooledFile> {
  await prepare(folder);
  const file = path.join(folder, `${randomUUID()}.spool`);
  const remove = () => fsp.rm(file, { force: true });
  // Only this service's user may read it: an export or import holds a workspace's data.
  const out = fs.createWriteStream(file, { flags: 'wx', mode: 0o600 });
  try {
    await pipeline(chunks, out);
  } catch (error) {
    await closed(out);
    await remove();
    throw error;
  }
  return { read: () => fs.createReadStream(file, { highWaterMark: READ_BYTES }), remove };
}

/** True for an error of the disk itself (no room, no rights, read-only), not of the data sent. */
export function isDiskError(error: unknown): boolean {
  const { code, syscall } = error as NodeJS.ErrnoException;
  return typeof syscall === 'string' && ['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'ENOENT', 'ENOTDIR', 'EEXIST', 'EIO'].includes(code ?? '');
}

function prepare(folder: string): Promise<void> {
  let done = prepared.get(folder);
  if (!done) {
    done = (async () => {
      await fsp.mkdir(folder, { recursive: true, mode: 0o700 });
      const now = Date.now();
      for (const name of await fsp.readdir(folder)) {
        if (!name.endsWith('.spool')) continue;
        const stale = await fsp.stat(path.join(folder, name)).then((stat) => now - stat.mtimeMs > STALE_MS, () => false);
        if (stale) await fsp.rm(path.join(folder, name), { force: true });
      }
    })();
    // A failure (say, a read-only disk) is tried again by the next spool.
    done.catch(() => prepared.delete(folder));
    prepared.set(folder, done);
  }
  return done;
}
