import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, inject } from 'vitest';
import { buildApp } from '../../src/app.js';
import { buildDeps, closeServices } from '../../src/build-services.js';
import { ManualClock } from '../../src/clock.js';
import { loadConfig, type Config } from '../../src/config.js';
import { connectStorage, type Storage } from '../../src/db/connect.js';
import type { Engine } from '../../src/db/dialect.js';
import type { Deps } from '../../src/deps.js';
import type { App } from '../../src/http/app-type.js';
import { testSchemaPrefix } from './global-setup.js';
import { migratedPostgres, migratedSqlite, sqliteStorageAt, tempSqliteFile, withAdmin, type MigratedStorage } from './migrated-storage.js';

export const ENGINES: Engine[] = ['sqlite', 'postgres'];

/** Runs a block of tests once per engine; the PostgreSQL block is skipped (and said so) without one. */
export function describeEachEngine(name: string, body: (engine: Engine) => void): void {
  for (const engine of ENGINES) {
    const skip = engine === 'postgres' && inject('postgresUrl') === null;
    (skip ? describe.skip : describe)(`${name} [${engine}]`, () => body(engine));
  }
}

/**
 * A fresh, empty database of the engine: a SQLite file in the temp folder (a file, not
 * ':memory:', so that snapshots can open a second connection to it), or a new PostgreSQL schema.
 */
export async function freshStorage(engine: Engine): Promise<MigratedStorage> {
  if (engine === 'sqlite') {
    const file = tempSqliteFile();
    return sqliteStorageAt(file, await connectStorage({ engine: 'sqlite', file }));
  }
  const url = postgresUrl();
  const schema = testSchemaName();
  await withAdmin(url, (client) => client.query(`create schema ${schema}`));
  const storage = await connectStorage({ engine: 'postgres', url }, { schema, poolSize: 5 });
  return {
    ...storage,
    url,
    schema,
    close: async () => {
      await storage.close();
      await withAdmin(url, (client) => client.query(`drop schema if exists ${schema} cascade`));
    },
  };
}

/**
 * A fresh database already at the latest migration, as startTestApp's: a copy of a migrated
 * template on SQLite, an emptied migrated schema on PostgreSQL (support/migrated-storage.ts).
 */
export async function migratedStorage(engine: Engine): Promise<MigratedStorage> {
  return engine === 'sqlite' ? migratedSqlite() : migratedPostgres(postgresUrl(), testSchemaName);
}

function postgresUrl(): string {
  const url = inject('postgresUrl');
  if (!url) throw new Error('PostgreSQL is not available to this run');
  return url;
}

/** Named after the run, so that the run's end drops every schema it made (global-setup.ts). */
function testSchemaName(): string {
  return `${testSchemaPrefix(inject('testRunId'))}${randomBytes(6).toString('hex')}`;
}

let dataDir: string | undefined;

/**
 * The data folder of this test process (files, import and export spools), in the temp folder and
 * removed when the process ends: the default, ./data, is the developer's own.
 */
export function testDataDir(): string {
  if (!dataDir) {
    const made = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-test-data-'));
    process.once('exit', () => fs.rmSync(made, { recursive: true, force: true }));
    dataDir = made;
  }
  return dataDir;
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({ PLAINBASE_LOG_LEVEL: 'silent', PLAINBASE_SIGN_IN_SLOWDOWN_MS: '0', PLAINBASE_DATA_DIR: testDataDir() }),
    publicUrl: 'http://plainbase.test',
    // Tests fire requests faster than any client would; the rate-limit test turns these on.
    rateLimitPerIp: 0,
    rateLimitPerKey: 0,
    authFailuresPerIp: 0,
    // scrypt at N=2^10 instead of 2^15: the suite makes about a thousand people, each hashed once.
    // test/passwords.test.ts checks that the service itself keeps the real cost.
    passwordHashCost: 10,
    ...overrides,
  };
}

export interface TestApp {
  app: App;
  deps: Deps;
  clock: ManualClock;
  storage: Storage;
  close(): Promise<void>;
}

/**
 * The whole app in-process on a fresh database, with a clock the test moves. `appDb` makes the
 * database the app uses from the fresh one (a test wraps it to watch its queries: counting-app.ts).
 */
export async function startTestApp(engine: Engine, overrides: Partial<Config> = {}, appDb: (db: Storage['db']) => Storage['db'] = (db) => db): Promise<TestApp> {
  const storage = await migratedStorage(engine);
  const clock = new ManualClock();
  const config = testConfig({ ...overrides, database: engine === 'sqlite' ? { engine, file: storage.url.slice('sqlite:'.length) } : { engine, url: storage.url } });
  const deps: Deps = buildDeps(config, { ...storage, db: appDb(storage.db) }, clock);
  // The very object the app uses, so a test can wire more into it later (a DNS resolver).
  const appDeps = Object.assign(deps, { logger: false as const });
  const app = await buildApp(appDeps);
  await app.ready();
  return {
    app,
    deps,
    clock,
    storage,
    close: async () => {
      await app.close();
      await closeServices(deps);
      await storage.close();
    },
  };
}

/**
 * A second app on the database of `t`, as another process would run it: its own connections,
 * its own in-process caches, the same clock. Closing it leaves the database to `t`.
 */
export async function startTestAppBeside(t: TestApp): Promise<TestApp> {
  const { schema } = t.storage as Storage & { schema?: string };
  const storage = await connectStorage(t.deps.config.database, { schema, poolSize: 5 });
  // Its own services (hub, sender, caches), as another process has; the same configuration and resolver.
  const deps: Deps = Object.assign(buildDeps(t.deps.config, storage, t.clock), { resolveHost: t.deps.resolveHost });
  const app = await buildApp(Object.assign(deps, { logger: false as const }));
  await app.ready();
  return {
    app,
    deps,
    clock: t.clock,
    storage,
    close: async () => {
      await app.close();
      await closeServices(deps);
      await storage.close();
    },
  };
}
