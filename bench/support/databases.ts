import pg from 'pg';
import { onCleanup } from './processes.js';

/** The PostgreSQL server the benches use, without a database name: BENCH_PG_URL. */
export function benchPostgresUrl(): string {
  return (process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
}

let created = 0;

/**
 * A new empty PostgreSQL database on the server at `serverUrl` (no database name in it), dropped
 * when the bench cleans up (at the end or on Ctrl-C). `label` goes into the name, so a database
 * left behind by a killed bench says which bench made it. Returns the database's URL.
 */
export async function createDatabase(serverUrl: string, label: string): Promise<string> {
  created += 1;
  const name = `plainbase_bench_${label}_${process.pid}_${Date.now()}_${created}`;
  const admin = new pg.Client({ connectionString: `${serverUrl}/postgres`, connectionTimeoutMillis: 3000 });
  await admin.connect();
  try {
    await admin.query(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  onCleanup(`database ${name}`, async () => {
    const client = new pg.Client({ connectionString: `${serverUrl}/postgres`, connectionTimeoutMillis: 3000 });
    await client.connect();
    try {
      await client.query(`drop database if exists "${name}" with (force)`);
    } finally {
      await client.end();
    }
  });
  return `${serverUrl}/${name}`;
}

/** The PostgreSQL server's version, or the error that says why it cannot be reached. */
export async function postgresVersion(serverUrl: string): Promise<string | Error> {
  const client = new pg.Client({ connectionString: `${serverUrl}/postgres`, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return (await client.query<{ server_version: string }>('show server_version')).rows[0]!.server_version;
  } catch (error) {
    return error as Error;
  } finally {
    await client.end().catch(() => undefined);
  }
}
