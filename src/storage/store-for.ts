import path from 'node:path';
import type { Deps } from '../deps.js';
import { DiskStore } from './disk-store.js';
import type { FileStore } from './file-store.js';
import { LazyStore } from './lazy-store.js';

const stores = new WeakMap<Deps, FileStore>();

/** The file store the configuration names, one per running app, made on first use. */
export function fileStoreFor(deps: Deps): FileStore {
  let store = stores.get(deps);
  if (!store) {
    const s3 = deps.config.s3;
    store = s3 ? new LazyStore(async () => new (await import('./s3-store.js')).S3Store(s3)) : new DiskStore(path.join(deps.config.dataDir, 'files'));
    stores.set(deps, store);
  }
  return store;
}

export async function closeFileStore(deps: Deps): Promise<void> {
  const store = stores.get(deps);
  stores.delete(deps);
  await store?.close();
}
