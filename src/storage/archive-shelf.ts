import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Config } from '../config.js';

declare module '../services.js' {
  interface Services {
    /** Where the backups the service takes are kept. */
    archiveShelf: ArchiveShelf;
  }
}

/** An archive kept on a shelf. */
export interface ShelvedArchive {
  name: string;
  size: number;
}

/**
 * Where finished backup archives are kept (docs/backups.md, "Where they go"): the `backups`
 * folder of the data folder, or the `backups/` prefix of the S3 bucket when files live in S3.
 * Archives are written locally first (`stagingDir`), then put on the shelf whole, so the shelf
 * only ever holds complete archives. Names are checked here too: nothing that could leave the
 * folder or the prefix reaches the disk or the bucket.
 */
export interface ArchiveShelf {
  /** The local folder an archive is written in before it is put on the shelf. */
  readonly stagingDir: string;
  /** Every archive on the shelf whose name is a safe name (the caller picks its own among them). */
  list(): Promise<ShelvedArchive[]>;
  /** Moves the finished local `file` onto the shelf as `name`; the local file is gone after. */
  put(name: string, file: string): Promise<void>;
  /** The archive's content and size, or null when the shelf has no archive of that name. */
  read(name: string): Promise<{ content: Readable; size: number } | null>;
  /** Removes an archive; a name that holds nothing is not an error. */
  remove(name: string): Promise<void>;
  close(): Promise<void>;
}

/** A name that is one plain file name: letters, digits, dots, hyphens, underscores, no leading dot. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;

export function checkArchiveName(name: string): string {
  if (!SAFE_NAME.test(name) || name.includes('..')) throw new Error(`unsafe archive name ${JSON.stringify(name)}`);
  return name;
}

/** The shelf the configuration names: the S3 bucket's `backups/` prefix when files go to S3, else the data folder's `backups`. */
export function makeArchiveShelf(config: Config): ArchiveShelf {
  const folder = path.join(config.dataDir, 'backups');
  const s3 = config.s3;
  return s3 ? new LazyShelf(folder, async () => new (await import('./s3-shelf.js')).S3Shelf(s3, folder)) : new DiskShelf(folder);
}

/** Archives in a folder on disk. */
export class DiskShelf implements ArchiveShelf {
  constructor(readonly stagingDir: string) {}

  async list(): Promise<ShelvedArchive[]> {
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(this.stagingDir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const archives: ShelvedArchive[] = [];
    for (const entry of entries) {
      if (!entry.isFile() || !SAFE_NAME.test(entry.name)) continue;
      const stat = await fs.promises.stat(path.join(this.stagingDir, entry.name)).catch(() => null);
      if (stat) archives.push({ name: entry.name, size: stat.size });
    }
    return archives;
  }

  async put(name: string, file: string): Promise<void> {
    await fs.promises.rename(file, path.join(this.stagingDir, checkArchiveName(name)));
  }

  async read(name: string): Promise<{ content: Readable; size: number } | null> {
    const file = path.join(this.stagingDir, checkArchiveName(name));
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(file, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    // Opened first, then measured: an archive removed meanwhile still reads whole.
    const { size } = await handle.stat();
    return { content: handle.createReadStream(), size };
  }

  async remove(name: string): Promise<void> {
    await fs.promises.rm(path.join(this.stagingDir, checkArchiveName(name)), { force: true });
  }

  async close(): Promise<void> {}
}

/** A shelf made at its first use, as LazyStore is: the AWS SDK loads only when a backup is taken or listed. */
class LazyShelf implements ArchiveShelf {
  private shelf: Promise<ArchiveShelf> | null = null;

  constructor(readonly stagingDir: string, private readonly make: () => Promise<ArchiveShelf>) {}

  private loaded(): Promise<ArchiveShelf> {
    this.shelf ??= this.make().catch((error: unknown) => {
      this.shelf = null;
      throw error;
    });
    return this.shelf;
  }

  list = async () => (await this.loaded()).list();
  put = async (name: string, file: string) => (await this.loaded()).put(name, file);
  read = async (name: string) => (await this.loaded()).read(name);
  remove = async (name: string) => (await this.loaded()).remove(name);

  async close(): Promise<void> {
    const shelf = this.shelf;
    this.shelf = null;
    if (shelf) await (await shelf.catch(() => null))?.close();
  }
}
