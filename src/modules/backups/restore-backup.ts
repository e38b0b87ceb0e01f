import fs, { createReadStream } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { extract as extractTar } from 'tar';
import type { Storage } from '../../db/connect.js';
import { migrateStorage } from '../../db/migrate.js';
import type { Executor } from '../../db/schema.js';
import type { FileStore } from '../../storage/file-store.js';
import { recordAudit } from '../audit/audit.js';
import { buildStoredIndexes } from '../indexes/indexes.js';
import { matchSearchTriggers } from '../collections/search-triggers.js';
import { holdRestoredWebhooks } from '../webhooks/restored-webhooks.js';
import { BACKUP_TABLES, MANIFEST, MANIFEST_SUM, filePart, manifestSchema, sha256OfFile, tablePart, type BackupManifest } from './backup-format.js';

/** Values bound per INSERT: well under SQLite's limit of 32,766 and PostgreSQL's of 65,535. */
const VALUES_PER_INSERT = 2_000;

/** A restore refused, with the one line that says why; nothing was written to the database. */
export class RestoreError extends Error {}

export interface RestoreSummary {
  manifest: BackupManifest;
  /** Webhooks turned off until a person turns them on (0 with `deliver`). */
  heldWebhooks: number;
}

/**
 * Restores a backup made by writeBackup into an empty database (docs/backups.md):
 *
 * 1. unpacks the archive into `workDir` and checks the manifest and the SHA-256 of every part, so
 *    a damaged archive is refused before the database is touched;
 * 2. migrates the database, refuses a migration level other than the archive's, and refuses a
 *    database that has any workspace or person;
 * 3. writes the files into the store (content only; a failure later leaves bytes no row names,
 *    identical to the archive's, and nothing else);
 * 4. writes every table in one transaction, builds the record indexes, adds the audit entry
 *    `backup.restored` (no workspace), and, unless `deliver`,
 *    turns every webhook off (reason `restored`) so that nothing is sent before a person says so.
 */
export async function restoreBackup(storage: Storage, store: FileStore, archive: string, options: { workDir: string; deliver: boolean; now: Date }): Promise<RestoreSummary> {
  if (!fs.existsSync(archive)) throw new RestoreError(`${archive}: no such file`);
  fs.mkdirSync(options.workDir, { recursive: true });
  const work = fs.mkdtempSync(path.join(options.workDir, '.plainbase-restore-'));
  try {
    const manifest = await unpackAndVerify(archive, work);
    await migrateStorage(storage);
    await checkTarget(storage.db, manifest);
    for (const file of manifest.files) await store.write(file.storageKey, createReadStream(path.join(work, filePart(file.storageKey))));
    const heldWebhooks = await storage.db.transaction().execute(async (trx) => {
      // Checked again inside: a person created meanwhile must not be merged with the archive's.
      await checkEmpty(trx);
      for (const table of BACKUP_TABLES) {
        await insertTable(trx, table, manifest.tables[table], path.join(work, tablePart(table)));
        // The search index is not in the archive: the triggers write it as the records come, if some collection searches.
        if (table === 'collections') await matchSearchTriggers(trx, storage.dialect);
      }
      await buildStoredIndexes(trx, storage.dialect);
      // An instance-wide entry (no workspace): which archive filled this database, and when.
      await recordAudit(trx, options.now, { ip: null, userAgent: null, requestId: null }, {
        workspaceId: null,
        actor: { type: 'system', id: null, name: 'plainbase restore' },
        action: 'backup.restored',
        target: { type: 'backup', id: path.basename(archive) },
        details: { takenAt: manifest.createdAt, engine: manifest.engine, deliver: options.deliver },
      });
      return options.deliver ? 0 : holdRestoredWebhooks(trx, options.now);
    });
    return { manifest, heldWebhooks };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

async function unpackAndVerify(archive: string, work: string): Promise<BackupManifest> {
  const unexpected: string[] = [];
  try {
    await extractTar({
      file: archive,
      cwd: work,
      strict: true,
      // Plain files and folders only: a link could point the restore at a file outside the archive.
      filter: (entryPath, entry) => {
        const type = 'type' in entry ? entry.type : 'File';
        if (type === 'File' || type === 'Directory') return true;
        unexpected.push(entryPath);
        return false;
      },
    });
  } catch (error) {
    throw new RestoreError(`${archive} is not a readable backup archive (${(error as Error).message})`);
  }
  if (unexpected.length) throw new RestoreError(`${archive} holds entries a backup never has (${unexpected.slice(0, 3).join(', ')})`);

  const manifestFile = path.join(work, MANIFEST);
  if (!fs.existsSync(manifestFile) || !fs.existsSync(path.join(work, MANIFEST_SUM))) throw new RestoreError(`${archive} is not a Plainbase backup: it has no ${MANIFEST}`);
  if ((await sha256OfFile(manifestFile)) !== fs.readFileSync(path.join(work, MANIFEST_SUM), 'utf8').trim()) {
    throw new RestoreError(`${archive} is damaged: ${MANIFEST} does not match its SHA-256`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  } catch {
    throw new RestoreError(`${archive} is damaged: ${MANIFEST} is not JSON`);
  }
  const checked = manifestSchema.safeParse(parsed);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    throw new RestoreError(`${archive} is not a backup this Plainbase reads: ${MANIFEST} ${issue.path.join('.') || '(top)'}: ${issue.message}`);
  }
  const manifest = checked.data;
  for (const table of BACKUP_TABLES) {
    const part = tablePart(table);
    if (!fs.existsSync(path.join(work, part))) throw new RestoreError(`${archive} is damaged: ${part} is missing`);
    if ((await sha256OfFile(path.join(work, part))) !== manifest.tables[table].sha256) throw new RestoreError(`${archive} is damaged: ${part} does not match its SHA-256`);
  }
  for (const file of manifest.files) {
    const part = filePart(file.storageKey);
    if (!fs.existsSync(path.join(work, part))) throw new RestoreError(`${archive} is damaged: ${part} is missing`);
    if ((await sha256OfFile(path.join(work, part))) !== file.sha256) throw new RestoreError(`${archive} is damaged: ${part} does not match its SHA-256`);
  }
  return manifest;
}

/** The database must be at the archive's migration level, with the archive's columns, and empty. */
async function checkTarget(db: Executor, manifest: BackupManifest): Promise<void> {
  const applied = ((await (db as unknown as { selectFrom(table: string): any }).selectFrom('plainbase_migrations').select('name').orderBy('name').execute()) as { name: string }[]).map((row) => row.name);
  const theirs = manifest.migrations.at(-1)!;
  const ours = applied.at(-1);
  if (applied.join() !== manifest.migrations.join()) {
    throw new RestoreError(`the backup is at migration ${theirs} and this Plainbase at ${ours}: restore it with the version of Plainbase that made it`);
  }
  const tables = new Map((await db.introspection.getTables()).map((table) => [table.name, table.columns.map((column) => column.name).sort().join()]));
  for (const table of BACKUP_TABLES) {
    if (tables.get(table) !== [...manifest.tables[table].columns].sort().join()) throw new RestoreError(`the backup's columns of ${table} are not this database's`);
  }
  await checkEmpty(db);
}

async function checkEmpty(db: Executor): Promise<void> {
  const workspaces = await db.selectFrom('workspaces').select(['id', 'name']).limit(3).execute();
  if (workspaces.length) {
    const named = workspaces.map((w) => `${w.id} "${w.name}"`).join(', ');
    throw new RestoreError(`the database is not empty: it has workspaces (${named}${workspaces.length === 3 ? ', …' : ''}); restore fills an empty database only`);
  }
  const person = await db.selectFrom('people').select('email').limit(1).executeTakeFirst();
  if (person) throw new RestoreError(`the database is not empty: it has people (${person.email}); restore fills an empty database only`);
}

/** Writes one table's rows from its part, a batch per INSERT, and checks their count against the manifest. */
async function insertTable(trx: Executor, table: string, part: BackupManifest['tables'][(typeof BACKUP_TABLES)[number]], file: string): Promise<void> {
  const { columns } = part;
  const batchSize = Math.max(1, Math.floor(VALUES_PER_INSERT / columns.length));
  let batch: Record<string, unknown>[] = [];
  let rows = 0;
  const flush = async () => {
    if (batch.length) await (trx as unknown as { insertInto(table: string): any }).insertInto(table).values(batch).execute();
    batch = [];
  };
  for await (const line of readline.createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (line === '') continue;
    let values: unknown;
    try {
      values = JSON.parse(line);
    } catch {
      throw new RestoreError(`${tablePart(table)} row ${rows + 1} is not JSON`);
    }
    if (!Array.isArray(values) || values.length !== columns.length) throw new RestoreError(`${tablePart(table)} row ${rows + 1} does not have the manifest's ${columns.length} columns`);
    const row = Object.create(null) as Record<string, unknown>;
    columns.forEach((column, i) => {
      const value = values[i];
      if (value !== null && typeof value !== 'string' && typeof value !== 'number') throw new RestoreError(`${tablePart(table)} row ${rows + 1}: ${column} is not text, a number or null`);
      row[column] = value;
    });
    batch.push(row);
    rows += 1;
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  if (rows !== part.rows) throw new RestoreError(`${tablePart(table)} has ${rows} rows, its manifest says ${part.rows}`);
}
