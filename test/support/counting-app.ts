import type { KyselyPlugin, OperationNode } from 'kysely';
import { buildApp } from '../../src/app.js';
import { ManualClock } from '../../src/clock.js';
import type { Engine } from '../../src/db/dialect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { Deps } from '../../src/deps.js';
import { freshStorage, testConfig, type TestApp } from './harness.js';

/** Every table named anywhere in a query tree. */
function tablesOf(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((child) => tablesOf(child, found));
  else if (node && typeof node === 'object') {
    const record = node as Record<string, any>;
    if (record.kind === 'TableNode') found.add(record.table.identifier.name);
    for (const value of Object.values(record)) tablesOf(value, found);
  }
  return found;
}

export interface CountingApp extends TestApp {
  /** Every query the app has run, as "<kind> <tables>", e.g. "UpdateQueryNode api_keys". */
  queries: string[];
}

/**
 * startTestApp, with a Kysely plugin on the app's database that records every query it runs:
 * the proof that some requests cost no database work, and that some writes are not issued.
 */
export async function startCountingApp(engine: Engine): Promise<CountingApp> {
  const storage = await freshStorage(engine);
  await migrateToLatest(storage.db);
  const queries: string[] = [];
  const counter: KyselyPlugin = {
    transformQuery: (args) => {
      queries.push(`${args.node.kind} ${[...tablesOf(args.node as OperationNode)].join(',')}`);
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  const clock = new ManualClock();
  const config = testConfig({ database: engine === 'sqlite' ? { engine, file: storage.url.slice('sqlite:'.length) } : { engine, url: storage.url } });
  const db = storage.db.withPlugin(counter);
  // A query compiled beforehand (a list's reusable first page) meets no plugin: counted here.
  const executeQuery = db.executeQuery.bind(db);
  db.executeQuery = ((query: Parameters<typeof executeQuery>[0], queryId?: Parameters<typeof executeQuery>[1]) => {
    if (!('compile' in query)) queries.push(`CompiledQuery ${query.sql.slice(0, 40)}`);
    return executeQuery(query, queryId);
  }) as typeof db.executeQuery;
  const deps: Deps = { config, db, dialect: storage.dialect, clock, openSnapshot: storage.openSnapshot };
  const app = await buildApp({ ...deps, logger: false });
  await app.ready();
  return {
    app,
    deps,
    clock,
    storage,
    queries,
    close: async () => {
      await app.close();
      await storage.close();
    },
  };
}
