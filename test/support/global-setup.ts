import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';

export const TEST_POSTGRES_URL = process.env.PLAINBASE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string | null;
    testRunId: string;
  }
}

/**
 * Decides once whether the PostgreSQL runs happen. In CI (CI=true) or with
 * PLAINBASE_TEST_REQUIRE_POSTGRES=1 a missing PostgreSQL fails the suite; locally it is skipped
 * with a warning that says so.
 */
/** Every PostgreSQL schema a test makes starts so (harness.ts), the run's id in it. */
export const testSchemaPrefix = (runId: string): string => `test_${runId}_`;

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const runId = randomBytes(4).toString('hex');
  project.provide('testRunId', runId);
  const required = process.env.CI === 'true' || process.env.PLAINBASE_TEST_REQUIRE_POSTGRES === '1';
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    project.provide('postgresUrl', TEST_POSTGRES_URL);
    return () => dropRunSchemas(TEST_POSTGRES_URL, runId);
  } catch (error) {
    const reason = `PostgreSQL at ${TEST_POSTGRES_URL} is not reachable (${(error as Error).message})`;
    if (required) throw new Error(`${reason}; the PostgreSQL runs are required here.`);
    process.stderr.write(`\n*** ${reason}: SKIPPING every PostgreSQL run of the suite. ***\n\n`);
    project.provide('postgresUrl', null);
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Drops the schemas this run left: the emptied ones the test processes kept for their next test
 * (support/migrated-storage.ts) and any a failed test did not drop. Other runs' schemas, of a
 * developer running two suites at once, have other ids and stay.
 */
async function dropRunSchemas(url: string, runId: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>(`select nspname from pg_namespace where starts_with(nspname, $1)`, [testSchemaPrefix(runId)]);
    for (const { nspname } of rows) await client.query(`drop schema if exists ${nspname} cascade`);
  } finally {
    await client.end();
  }
}
