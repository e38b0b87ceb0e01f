import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';

/** Where a bench's server keeps its data: its SQLite file in the data dir, or its PostgreSQL database. */
export type BenchDatabase = { engine: 'sqlite'; dataDir: string } | { engine: 'postgres'; url: string };

/**
 * Waits until the outbox holds no event left to fan out, asking the database itself every 250 ms:
 * the fan-out's work is partly the database's (on PostgreSQL mostly), which the server's own CPU
 * time does not show. Returns how long it took, or that `timeoutSeconds` ran out.
 */
export async function waitUntilFannedOut(database: BenchDatabase, timeoutSeconds = 900): Promise<{ seconds: number; timedOut: boolean }> {
  const started = Date.now();
  const pending = await pendingCounter(database);
  try {
    for (;;) {
      if ((await pending.count()) === 0) return { seconds: (Date.now() - started) / 1000, timedOut: false };
      if (Date.now() - started >= timeoutSeconds * 1000) return { seconds: timeoutSeconds, timedOut: true };
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    await pending.close();
  }
}

async function pendingCounter(database: BenchDatabase): Promise<{ count(): Promise<number>; close(): Promise<void> }> {
  const text = 'select count(*) as pending from events where fanned_out_at is null';
  if (database.engine === 'sqlite') {
    const connection = new Database(path.join(database.dataDir, 'plainbase.db'), { readonly: true });
    const statement = connection.prepare(text);
    return {
      count: async () => Number((statement.get() as { pending: number }).pending),
      close: async () => {
        connection.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  return {
    count: async () => Number((await client.query<{ pending: string }>(text)).rows[0]!.pending),
    close: () => client.end(),
  };
}
