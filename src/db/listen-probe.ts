import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { ConfigError, redactDatabaseUrl } from '../config.js';

/**
 * Tells at start whether a PostgreSQL URL leads to a transaction-mode pooler (PgBouncer with
 * pool_mode=transaction, Supavisor, RDS Proxy), which Plainbase can use only beside a direct
 * connection (PLAINBASE_DATABASE_DIRECT_URL). No query answers "I am a pooler" (PgBouncer passes
 * SHOW and version() to the server), but a session feature shows it: one connection LISTENs on a
 * random channel and another NOTIFYs on it. On a server (or a session-mode pooler) the listener
 * hears it within milliseconds; behind transaction pooling the LISTEN ran on a server connection
 * the pooler has since lent to someone else, and the notification never reaches the listener.
 */

/** How long the listener waits for the notification before calling the URL a pooler. */
export const PROBE_WAIT_MS = 2000;

/** What a start-time check may pass to pg besides the URL (a test's search_path). */
export type ClientOptions = Omit<pg.ClientConfig, 'connectionString'>;

const loadPg = async () => (await import('pg')).default;

/** True when a notification sent on one connection to `url` did not reach another one within PROBE_WAIT_MS. */
export async function dropsNotifications(url: string, options: ClientOptions = {}): Promise<boolean> {
  const pg = await loadPg();
  const channel = `plainbase_probe_${randomBytes(8).toString('hex')}`;
  const listener = new pg.Client({ ...options, connectionString: url, connectionTimeoutMillis: 5000 });
  const notifier = new pg.Client({ ...options, connectionString: url, connectionTimeoutMillis: 5000 });
  listener.on('error', () => undefined);
  notifier.on('error', () => undefined);
  try {
    await Promise.all([listener.connect(), notifier.connect()]);
    let heard: () => void = () => undefined;
    const arrived = new Promise<boolean>((resolve) => {
      heard = () => resolve(true);
      setTimeout(() => resolve(false), PROBE_WAIT_MS).unref();
    });
    listener.on('notification', (message) => {
      if (message.channel === channel) heard();
    });
    await listener.query(`listen ${channel}`);
    await notifier.query('select pg_notify($1, $2)', [channel, '']);
    return !(await arrived);
  } finally {
    // The channel is random and nobody else sends on it; the LISTEN ends with the session (or, behind a pooler, is left harmless).
    await Promise.all([listener.end().catch(() => undefined), notifier.end().catch(() => undefined)]);
  }
}

/** The identity of the database a connection reaches: its name and, where readable, its cluster's system identifier. */
async function databaseIdentity(client: pg.Client): Promise<{ database: string; system: string | null }> {
  const { rows } = await client.query<{ database: string }>('select current_database() as database');
  // pg_control_system() may be closed to a role without pg_monitor; the name alone is checked then.
  const system = await client.query<{ id: string }>('select system_identifier::text as id from pg_control_system()').then(
    (result) => result.rows[0]?.id ?? null,
    () => null,
  );
  return { database: rows[0]!.database, system };
}

async function identityAt(url: string, options: ClientOptions): Promise<{ database: string; system: string | null }> {
  const pg = await loadPg();
  const client = new pg.Client({ ...options, connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await databaseIdentity(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The start-time check of the connection paths (connect.ts, when asked): without a direct URL,
 * the pooled URL must not be a transaction-mode pooler; with one, the direct URL must answer, be
 * no pooler itself and reach the same database as the pooled URL. Each failure is a ConfigError
 * naming PLAINBASE_DATABASE_DIRECT_URL, one line at start instead of errors on every request.
 */
export async function checkConnectionPaths(url: string, directUrl: string | undefined, options: ClientOptions = {}): Promise<void> {
  if (directUrl === undefined) {
    if (await dropsNotifications(url, options)) {
      throw new ConfigError(
        'PLAINBASE_DATABASE_URL',
        `${redactDatabaseUrl(url)} looks like a transaction-mode pooler (a LISTEN there heard no NOTIFY within ${PROBE_WAIT_MS / 1000} s); set PLAINBASE_DATABASE_DIRECT_URL to a direct connection to the same database`,
      );
    }
    return;
  }
  const where = redactDatabaseUrl(directUrl);
  let direct: { database: string; system: string | null };
  try {
    direct = await identityAt(directUrl, options);
  } catch (error) {
    throw new ConfigError('PLAINBASE_DATABASE_DIRECT_URL', `cannot use the database at ${where}: ${(error as Error).message}`);
  }
  const pooled = await identityAt(url, options);
  if (direct.database !== pooled.database || (direct.system !== null && pooled.system !== null && direct.system !== pooled.system)) {
    throw new ConfigError(
      'PLAINBASE_DATABASE_DIRECT_URL',
      `${where} reaches database "${direct.database}"${direct.system ? ` of system ${direct.system}` : ''}, but PLAINBASE_DATABASE_URL reaches "${pooled.database}"${pooled.system ? ` of system ${pooled.system}` : ''}; both must lead to the same database`,
    );
  }
  if (await dropsNotifications(directUrl, options)) {
    throw new ConfigError('PLAINBASE_DATABASE_DIRECT_URL', `${where} looks like a transaction-mode pooler too (a LISTEN there heard no NOTIFY within ${PROBE_WAIT_MS / 1000} s); it must be a direct connection to the server`);
  }
}
