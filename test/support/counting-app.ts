import type { KyselyPlugin, OperationNode } from 'kysely';
import type { Engine } from '../../src/db/dialect.js';
import type { Db } from '../../src/db/schema.js';
import { startTestApp, type TestApp } from './harness.js';

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
  const queries: string[] = [];
  const counter: KyselyPlugin = {
    transformQuery: (args) => {
      queries.push(`${args.node.kind} ${[...tablesOf(args.node as OperationNode)].join(',')}`);
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  const counted = (fresh: Db): Db => {
    const db = fresh.withPlugin(counter);
    // A query compiled beforehand (a list's reusable first page) meets no plugin: counted here.
    const executeQuery = db.executeQuery.bind(db);
    db.executeQuery = ((query: Parameters<typeof executeQuery>[0], queryId?: Parameters<typeof executeQuery>[1]) => {
      if (!('compile' in query)) queries.push(`CompiledQuery ${query.sql.slice(0, 40)}`);
      return executeQuery(query, queryId);
    }) as typeof db.executeQuery;
    return db;
  };
  return Object.assign(await startTestApp(engine, {}, counted), { queries });
}
