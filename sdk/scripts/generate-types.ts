// Rewrites src/generated/openapi.ts from the OpenAPI document of the server in this repository:
// the app is built in-process on a throwaway SQLite database with the default settings (the
// document quotes some of them) and asked for /v1/openapi.json, as a client would.
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../../src/app.js';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { connectStorage } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { buildDeps } from '../../src/build-services.js';
import { GENERATED_TYPES, typesFromOpenApi } from './types-from-openapi.js';

const file = path.join(os.tmpdir(), `plainbase-sdk-types-${randomBytes(6).toString('hex')}.db`);
const storage = await connectStorage({ engine: 'sqlite', file });
try {
  await migrateToLatest(storage.db);
  const config = { ...loadConfig({ PLAINBASE_LOG_LEVEL: 'silent' }), database: { engine: 'sqlite' as const, file } };
  const app = await buildApp({ ...buildDeps(config, storage, systemClock), logger: false });
  try {
    const response = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
    if (response.statusCode !== 200) throw new Error(`/v1/openapi.json answered ${response.statusCode}`);
    writeFileSync(GENERATED_TYPES, await typesFromOpenApi(response.json()));
    process.stdout.write(`wrote ${path.relative(process.cwd(), fileURLToPath(GENERATED_TYPES))}\n`);
  } finally {
    await app.close();
  }
} finally {
  await storage.close();
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
}
