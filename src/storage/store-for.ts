import path from 'node:path';
import type { Deps } from '../deps.js';
import { DiskStore } from './disk-store.js';
import type { FileStore } from './file-store.js';
import { S3Store } from './s3-store.js';

const stores = new WeakMap<Deps, FileStore>();

/** The file store the configuration names, one per running app, made on first use. */
export function fileStoreFor(deps: Deps): FileStore {
  let store = stores.get(deps);
  if (!store) {
    store = deps.config.s3 ? new S3Store(deps.config.s3) : new DiskStore(path.join(deps.config.dataDir, 'files'));
    stores.set(deps, store);
  }
  return store;
}

export async function closeFileStore(deps: Deps): Promise<void> {
  const store = stores.get(deps);
  stores.delete(deps);
  await store?.close();
}
