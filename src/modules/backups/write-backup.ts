import { createHash } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { create as createTar } from 'tar';
import type { Storage } from '../../db/connect.js';
import type { Executor } from '../../db/schema.js';
import { checkKey, type FileStore } from '../../storage/file-store.js';
import {
  BACKUP_TABLES,
  FORMAT,
  FORMAT_VERSION,
  LEFT_OUT_TABLES,
  MANIFEST,
  MANIFEST_SUM,
  filePart,
  tablePart,
  type BackupManifest,
} from './backup-format.js';

/** Rows read from the database at a time: the backup never holds a table in memory. */
const ROWS_PER_READ = 500;

export interface BackupSummary {
  file: string;
  manifest: BackupManifest;
  bytes: number;
}

/**
 * Writes a backup of the whole database and its files to `outFile` (docs/backups.md). Every table
 * is read inside one snapshot (Storage.openSnapshot: one read transaction on SQLite, one
 * REPEATABLE READ read-only transaction on PostgreSQL), so the archive is the database of one
 * moment while writes go on. The parts are written to a folder beside `outFile` first (their
 * sizes go into the tar headers), then put into the tar, which appears under its name only once
 * complete. An existing `outFile` is never overwritten.
 */
export async function writeBackup(storage: Pick<Storage, 'db' | 'dialect' | 'openSnapshot'>, store: FileStore, outFile: string, now: Date): Promise<BackupSummary> {
  if (fs.existsSync(outFile)) throw new BackupError(`${outFile} exists already; name another file with --out`);
  const work = fs.mkdtempSync(path.join(path.dirname(path.resolve(outFile)), '.plainbase-backup-'));
  try {
    const manifest = await writeParts(storage, store, work, now);
    const manifestText = `${JSON.stringify(manifest, null, 2)}\n`;
    fs.writeFileSync(path.join(work, MANIFEST), manifestText);
    fs.writeFileSync(path.join(work, MANIFEST_SUM), `${createHash('sha256').update(manifestText).digest('hex')}\n`);
    const partial = `${outFile}.partial`;
    const parts = [MANIFEST, MANIFEST_SUM, 'tables', ...(manifest.files.length ? ['files'] : [])];
    await createTar({ file: partial, cwd: work, portable: true }, parts);
    // It holds every secret of the service: for the service's own user only, whatever the umask.
    fs.chmodSync(partial, 0o600);
    fs.renameSync(partial, outFile);
    return { file: outFile, manifest, bytes: fs.statSync(outFile).size };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
    fs.rmSync(`${outFile}.partial`, { force: true });
  }
}

/** A backup that cannot be taken, for a reason a person can act on. */
export class BackupError extends Error {}

async function writeParts(storage: Pick<Storage, 'db' | 'dialect' | 'openSnapshot'>, store: FileStore, work: string, now: Date): Promise<BackupManifest> {
  fs.mkdirSync(path.join(work, 'tables'));
  const snapshot = await storage.openSnapshot();
  try {
    const db = snapshot.db;
    const columnsOf = await tableColumns(db);
    const migrations = await appliedMigrations(db);
    const tables = {} as BackupManifest['tables'];
    for (const table of BACKUP_TABLES) {
      const columns = columnsOf.get(table)!;
      tables[table] = { columns, ...(await writeTable(db, table, columns, path.join(work, tablePart(table)))) };
    }
    const files = await copyFiles(db, store, work);
    return { format: FORMAT, formatVersion: FORMAT_VERSION, createdAt: now.toISOString(), engine: storage.dialect.engine, migrations, tables, files };
  } finally {
    await snapshot.close();
  }
}

/** The columns of every table, and a refusal if the database has a table the backup does not know (a new migration must add it). */
async function tableColumns(db: Executor): Promise<Map<string, string[]>> {
  const found = await db.introspection.getTables();
  const columns = new Map(found.map((table) => [table.name, table.columns.map((column) => column.name)]));
  const unknown = [...columns.keys()].filter((name) => !(BACKUP_TABLES as readonly string[]).includes(name) && !LEFT_OUT_TABLES.includes(name));
  if (unknown.length) throw new Error(`the database has tables a backup does not know: ${unknown.join(', ')} (add them to modules/backups/backup-format.ts)`);
  const missing = BACKUP_TABLES.filter((name) => !columns.has(name));
  if (missing.length) throw new BackupError(`the database lacks the tables ${missing.join(', ')}: run plainbase migrate first`);
  return columns;
}

async function appliedMigrations(db: Executor): Promise<string[]> {
  const rows = await (db as unknown as Executor & { selectFrom(table: 'plainbase_migrations'): any })
    .selectFrom('plainbase_migrations')
    .select('name')
    .orderBy('name')
    .execute();
  return (rows as { name: string }[]).map((row) => row.name);
}

/** Streams one table into its part, a row per line; answers the count and the part's SHA-256. */
async function writeTable(db: Executor, table: string, columns: string[], file: string): Promise<{ rows: number; sha256: string }> {
  const out = fs.createWriteStream(file);
  const hash = createHash('sha256');
  let rows = 0;
  const query = (db as unknown as { selectFrom(table: string): any }).selectFrom(table).select(columns);
  for await (const row of query.stream(ROWS_PER_READ) as AsyncIterable<Record<string, unknown>>) {
    const line = `${JSON.stringify(columns.map((column) => storedValue(table, column, row[column])))}\n`;
    hash.update(line);
    rows += 1;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return { rows, sha256: hash.digest('hex') };
}

/** Every stored value is text, a number or null on both engines (db/connect.ts reads bigint as a number and jsonb as text). */
function storedValue(table: string, column: string, value: unknown): string | number | null {
  if (value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))) return value;
  throw new Error(`${table}.${column} holds a value a backup cannot keep exactly (${typeof value})`);
}

/** Copies the content of every file row of the snapshot, checking each against the SHA-256 its row holds. */
async function copyFiles(db: Executor, store: FileStore, work: string): Promise<BackupManifest['files']> {
  const files: BackupManifest['files'] = [];
  const rows = db.selectFrom('files').select(['id', 'storage_key', 'size', 'sha256']).orderBy('id').stream(ROWS_PER_READ);
  for await (const row of rows) {
    const target = path.join(work, filePart(checkKey(row.storage_key)));
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const hash = createHash('sha256');
    let size = 0;
    try {
      const source = await store.read(row.storage_key);
      const measured = async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          hash.update(chunk);
          size += chunk.length;
          yield chunk;
        }
      };
      await pipeline(source, measured, fs.createWriteStream(target));
    } catch (error) {
      // A file deleted after the snapshot opened has its content removed at once (files/file-cleanup.ts).
      throw new BackupError(`the content of file ${row.id} (${row.storage_key}) cannot be read: ${(error as Error).message}; if it was deleted while the backup ran, run the backup again`);
    }
    const sha256 = hash.digest('hex');
    if (sha256 !== row.sha256 || size !== row.size) throw new BackupError(`the content of file ${row.id} (${row.storage_key}) is not what its row says (SHA-256 ${sha256}, ${size} bytes): the file store is damaged`);
    files.push({ storageKey: row.storage_key, size, sha256 });
  }
  return files;
}
