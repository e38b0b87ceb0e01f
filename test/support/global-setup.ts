import pg from 'pg';
import type { TestProject } from 'vitest/node';

export const TEST_POSTGRES_URL = process.env.PLAINBASE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string | null;
  }
}

/**
 * Decides once whether the PostgreSQL runs happen. In CI (CI=true) or with
 * PLAINBASE_TEST_REQUIRE_POSTGRES=1 a missing PostgreSQL fails the suite; locally it is skipped
 * with a warning that says so.
 */
export default async function setup(project: TestProject): Promise<void> {
  const required = process.env.CI === 'true' || process.env.PLAINBASE_TEST_REQUIRE_POSTGRES === '1';
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    project.provide('postgresUrl', TEST_POSTGRES_URL);
  } catch (error) {
    const reason = `PostgreSQL at ${TEST_POSTGRES_URL} is not reachable (${(error as Error).message})`;
    if (required) throw new Error(`${reason}; the PostgreSQL runs are required here.`);
    process.stderr.write(`\n*** ${reason}: SKIPPING every PostgreSQL run of the suite. ***\n\n`);
    project.provide('postgresUrl', null);
  } finally {
    await client.end().catch(() => undefined);
  }
}
