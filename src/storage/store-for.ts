import path from 'node:path';
import type { Config } from '../config.js';
import type { Deps } from '../deps.js';
import { DiskStore } from './disk-store.js';
import type { FileStore } from './file-store.js';
import { LazyStore } from './lazy-store.js';

declare module '../services.js' {
  interface Services {
    /** The file store the configuration names (made lazily inside: S3's client loads at first use). */
    fileStore: FileStore;
  }
}

/** The file store the configuration names: S3 when configured, else the data folder's `files`. */
export function makeFileStore(config: Config): FileStore {
  const s3 = config.s3;
  return s3 ? new LazyStore(async () => new (await import('./s3-store.js')).S3Store(s3)) : new DiskStore(path.join(config.dataDir, 'files'));
}

/** The file store of a running app (and its worker). */
export const fileStoreFor = (deps: Pick<Deps, 'services'>): FileStore => deps.services.fileStore;

export async function closeFileStore(deps: Pick<Deps, 'services'>): Promise<void> {
  await deps.services.fileStore.close();
}
