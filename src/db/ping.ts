import type { Dialect } from './dialect.js';
import type { Db } from './schema.js';

/** One cheap round trip: resolves when the database answers, rejects with why it does not. */
export async function pingDatabase(storage: { db: Db; dialect: Dialect }): Promise<void> {
  await storage.dialect.ping.execute(storage.db);
}
