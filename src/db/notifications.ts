import type { Config } from '../config.js';

/**
 * Calls `onNotify` whenever another process sends a NOTIFY on `channel` (PostgreSQL). Where the
 * database is one process's own (SQLite), nobody else can write, and this does nothing. A lost
 * listener costs only latency: every user of this also polls, more slowly. Returns a stop.
 */
export function listenForNotifications(database: Config['database'], channel: string, onNotify: () => void): () => void {
  if (database.engine !== 'postgres') return () => undefined;
  // Imported here, not at the top, so that a SQLite process never loads the PostgreSQL driver.
  const listening = import('pg').then(({ default: pg }) => {
    const client = new pg.Client({ connectionString: database.url });
    client.on('notification', onNotify);
    client.on('error', () => undefined);
    client.connect().then(() => client.query(`listen ${channel}`)).catch(() => undefined);
    return client;
  });
  return () => void listening.then((client) => client.end()).catch(() => undefined);
}
