import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { create as createTar, extract as extractTar, list as listTar } from 'tar';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Engine } from '../src/db/dialect.js';
import type { Executor } from '../src/db/schema.js';
import { BACKUP_TABLES } from '../src/modules/backups/backup-format.js';
import { restoreBackup, RestoreError } from '../src/modules/backups/restore-backup.js';
import { BackupError, writeBackup } from '../src/modules/backups/write-backup.js';
import type { FileStore } from '../src/storage/file-store.js';
import { fileStoreFor } from '../src/storage/store-for.js';
import { Client, KeyClient, signedInOwner } from './support/client.js';
import { ENGINES, startTestApp, type TestApp } from './support/harness.js';
import { call, createDatabase, OWNER, runCli, signInOwner, startServer, stopServer, type ServerProcess } from './support/server-process.js';

const hasPostgres = inject('postgresUrl') !== null;

/** Bytes no text encoding leaves alone: every byte value, twice. */
const FILE_BYTES = Buffer.from([...Array(512).keys()].map((i) => i % 256));
/** Values whose exact round trip is the point: text of every kind, big and negative numbers, booleans, nesting. */
const TRICKY = { title: 'Zoë ☃ 𝄞 "quoted" \\ back\nslash', big: 9007199254740991, negative: -0.5, yes: true, no: false, none: null, nested: { b: [1, { c: 'd' }], a: {} } };

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const tempDir = (name: string) => fs.mkdtempSync(path.join(os.tmpdir(), `plainbase-${name}-`));

/** A workspace with something in every kind of table: records (one trashed, all searched), schema versions, an index, a key, a webhook, a file, audit entries. */
async function fillSource(t: TestApp): Promise<{ owner: Client; keySecret: string; collectionId: string; recordId: string; fileId: string; webhookId: string }> {
  const owner = await signedInOwner(t);
  const collection = await owner.post('/v1/collections', { name: 'leads' });
  expect(collection.status).toBe(201);
  // Searched: the index is left out of the archive, and the restore's triggers write it again.
  expect((await owner.patch('/v1/collections/leads', { settings: { searchFields: ['data.title'] } })).status).toBe(200);
  const schema = { type: 'object', properties: { title: { type: 'string' } } };
  expect((await owner.post('/v1/collections/leads/schemas', { schema })).status).toBe(201);
  expect((await owner.post('/v1/collections/leads/schemas/1/activate')).status).toBe(200);
  expect((await owner.post('/v1/collections/leads/indexes', { name: 'by_title', fields: ['data.title'], unique: true })).status).toBe(201);
  const key = await owner.post('/v1/keys', { name: 'script', scopes: ['records:read', 'records:create', 'records:update', 'records:delete', 'files:read', 'files:write', 'collections:read'] });
  expect(key.status).toBe(201);
  const api = new KeyClient(t, key.body.secret);
  const record = await api.post('/v1/collections/leads/records', { data: TRICKY });
  expect(record.status, JSON.stringify(record.body)).toBe(201);
  expect((await api.patch(`/v1/collections/leads/records/${record.body.id}`, { data: { ...TRICKY, negative: -1.25 } })).status).toBe(200);
  const trashed = await api.post('/v1/collections/leads/records', { data: { title: 'to the trash' } });
  expect((await api.delete(`/v1/collections/leads/records/${trashed.body.id}`)).status).toBe(200);
  const file = await t.app.inject({ method: 'POST', url: '/v1/collections/leads/files?name=bytes.bin', headers: { authorization: `Bearer ${key.body.secret}`, 'content-type': 'application/octet-stream' }, payload: FILE_BYTES });
  expect(file.statusCode, file.body).toBe(201);
  const fileId = JSON.parse(file.body).id as string;
  expect((await api.post(`/v1/collections/leads/records/${record.body.id}/files`, { fileId })).status).toBe(200);
  const webhook = await owner.post('/v1/webhooks', { url: 'http://localhost:9/hook', events: ['*'] });
  expect(webhook.status, JSON.stringify(webhook.body)).toBe(201);
  return { owner, keySecret: key.body.secret, collectionId: collection.body.id, recordId: record.body.id, fileId, webhookId: webhook.body.id };
}

/** Every row of a table in a form both engines give alike: JSON text of records' data parsed (PostgreSQL keeps jsonb in its own key order), rows sorted. */
async function rowsOf(db: Executor, table: string): Promise<string[]> {
  const rows = (await (db as unknown as { selectFrom(t: string): any }).selectFrom(table).selectAll().execute()) as Record<string, unknown>[];
  return rows
    .map((row) => {
      const copy: Record<string, unknown> = { ...row };
      if ((table === 'records' || table === 'record_versions') && typeof copy.data === 'string') copy.data = JSON.parse(copy.data);
      return JSON.stringify(Object.keys(copy).sort().map((column) => [column, copy[column]]), (_key, value) =>
        value && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, value[k]])) : value,
      );
    })
    .sort();
}

async function archiveEntries(file: string): Promise<string[]> {
  const entries: string[] = [];
  await listTar({ file, onReadEntry: (entry) => entries.push(entry.path) });
  return entries;
}

const pairs = ENGINES.flatMap((from) => ENGINES.map((to) => [from, to] as [Engine, Engine]));

for (const [from, to] of pairs) {
  const skip = (from === 'postgres' || to === 'postgres') && !hasPostgres;
  (skip ? describe.skip : describe)(`backup on ${from}, restore on ${to}`, () => {
    let source: TestApp;
    let target: TestApp;
    let filled: Awaited<ReturnType<typeof fillSource>>;
    let archive: string;
    const dirs: string[] = [];

    beforeAll(async () => {
      const [sourceDir, targetDir, outDir] = [tempDir('backup-source'), tempDir('backup-target'), tempDir('backup-out')];
      dirs.push(sourceDir, targetDir, outDir);
      source = await startTestApp(from, { env: 'development', webhookAllowPrivate: true, dataDir: sourceDir });
      filled = await fillSource(source);
      archive = path.join(outDir, 'backup.tar');
      await writeBackup(source.storage, fileStoreFor(source.deps), archive, source.clock.now());
      target = await startTestApp(to, { env: 'development', webhookAllowPrivate: true, dataDir: targetDir });
      await restoreBackup(target.storage, fileStoreFor(target.deps), archive, { workDir: targetDir, deliver: false, now: target.clock.now() });
    }, 120_000);

    afterAll(async () => {
      await source?.close();
      await target?.close();
      for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    });

    it('restores every table row for row (webhooks held), sessions left out', async () => {
      for (const table of BACKUP_TABLES) {
        const [before, after] = [await rowsOf(source.deps.db, table), await rowsOf(target.deps.db, table)];
        if (table === 'webhooks') {
          expect(after.map((row) => JSON.parse(row).find(([c]: [string]) => c === 'disabled_reason')[1])).toEqual(['restored']);
          continue;
        }
        if (table === 'audit_log') {
          // The restore adds one entry of its own, for the whole instance.
          const restored = after.filter((row) => row.includes('"backup.restored"'));
          expect(restored).toHaveLength(1);
          expect(JSON.parse(restored[0]!)).toEqual(expect.arrayContaining([['workspace_id', null], ['actor_type', 'system'], ['target_id', 'backup.tar']]));
          expect(after.filter((row) => !restored.includes(row))).toEqual(before);
          continue;
        }
        expect(after, table).toEqual(before);
      }
      expect(await rowsOf(source.deps.db, 'audit_log')).not.toHaveLength(0);
      expect(await rowsOf(source.deps.db, 'sessions')).not.toHaveLength(0);
      expect(await rowsOf(target.deps.db, 'sessions')).toEqual([]);
      const entries = await archiveEntries(archive);
      expect(entries).toContain('tables/records.ndjson');
      expect(entries.filter((entry) => entry.includes('session'))).toEqual([]);
    });

    it('serves the restored workspace: the old key secret, the record, the file bytes, the unique index; the old session is gone', async () => {
      const api = new KeyClient(target, filled.keySecret);
      expect((await api.get('/v1/me')).status).toBe(200);
      const record = await api.get(`/v1/collections/leads/records/${filled.recordId}`);
      expect(record.status).toBe(200);
      // The PATCH is a merge patch: its null removed `none`.
      const { none: _removed, ...patched } = TRICKY;
      expect(record.body).toMatchObject({ data: { ...patched, negative: -1.25 }, schemaVersion: 1 });
      expect(record.body.data).not.toHaveProperty('none');
      const content = await target.app.inject({ method: 'GET', url: `/v1/collections/leads/files/${filled.fileId}/content`, headers: { authorization: `Bearer ${filled.keySecret}` } });
      expect(content.statusCode).toBe(200);
      expect(content.rawPayload.equals(FILE_BYTES)).toBe(true);
      const found = await api.get(`/v1/collections/leads/records?search=${encodeURIComponent('zoë quoted')}`);
      expect(found.status, JSON.stringify(found.body)).toBe(200);
      expect(found.body.data.map((row: { id: string }) => row.id)).toEqual([filled.recordId]);
      const duplicate = await api.post('/v1/collections/leads/records', { data: { title: TRICKY.title } });
      expect(duplicate.status).toBe(409);
      const staleSession = new Client(target);
      staleSession.cookie = filled.owner.cookie;
      staleSession.workspaceId = filled.owner.workspaceId;
      expect((await staleSession.get('/v1/collections')).status).toBe(401);
      const owner = new Client(target);
      expect((await owner.signIn(OWNER.email, OWNER.password)).status).toBe(200);
      const webhook = await owner.get(`/v1/webhooks/${filled.webhookId}`);
      expect(webhook.body).toMatchObject({ enabled: false, disabledReason: 'restored' });
    });

    it('refuses to restore into a database that has data, naming it, and changes nothing', async () => {
      const people = await rowsOf(target.deps.db, 'people');
      const error = await restoreBackup(target.storage, fileStoreFor(target.deps), archive, { workDir: dirs[1]!, deliver: true, now: target.clock.now() }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RestoreError);
      expect((error as Error).message).toMatch(/^the database is not empty: it has workspaces \(ws_\w+ "default"\); restore fills an empty database only$/);
      expect(await rowsOf(target.deps.db, 'people')).toEqual(people);
    });
  });
}

for (const engine of ENGINES) {
  (engine === 'postgres' && !hasPostgres ? describe.skip : describe)(`a damaged backup [${engine}]`, () => {
    let source: TestApp;
    let target: TestApp;
    let archive: string;
    let dir: string;

    beforeAll(async () => {
      dir = tempDir('backup-damaged');
      source = await startTestApp(engine, { env: 'development', webhookAllowPrivate: true, dataDir: path.join(dir, 'source') });
      await fillSource(source);
      archive = path.join(dir, 'backup.tar');
      await writeBackup(source.storage, fileStoreFor(source.deps), archive, source.clock.now());
      target = await startTestApp(engine, { dataDir: path.join(dir, 'target') });
    }, 120_000);

    afterAll(async () => {
      await source?.close();
      await target?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    /** The archive with one byte changed where `marker` first appears, restored into the empty target. */
    async function restoreChanged(marker: Buffer | string): Promise<unknown> {
      const bytes = fs.readFileSync(archive);
      const at = bytes.indexOf(marker);
      expect(at).toBeGreaterThan(0);
      bytes[at] = bytes[at]! ^ 0x01;
      const damaged = path.join(dir, `damaged-${at}.tar`);
      fs.writeFileSync(damaged, bytes);
      return restoreBackup(target.storage, fileStoreFor(target.deps), damaged, { workDir: dir, deliver: false, now: target.clock.now() }).catch((e: unknown) => e);
    }

    it('is refused, one byte changed in a table, a file or the manifest, and leaves the target empty', async () => {
      for (const [marker, part] of [
        // The first table part that holds the text (records, or the events that carry its data).
        ['to the trash', /tables\/\w+\.ndjson does not match its SHA-256$/],
        [FILE_BYTES.subarray(100, 140), /files\/ws_\w+\/col_\w+\/fil_\w+ does not match its SHA-256$/],
        ['"formatVersion"', /manifest\.json does not match its SHA-256$/],
      ] as const) {
        const error = await restoreChanged(marker);
        expect(error).toBeInstanceOf(RestoreError);
        expect((error as Error).message).toMatch(/ is damaged: /);
        expect((error as Error).message).toMatch(part);
      }
      for (const table of BACKUP_TABLES) expect(await rowsOf(target.deps.db, table), table).toEqual([]);
    });

    /** The archive unpacked, changed by `change` (checksums made to agree again), packed again, restored into the empty target. */
    async function restoreRewritten(change: (folder: string) => void): Promise<unknown> {
      const folder = fs.mkdtempSync(path.join(dir, 'unpacked-'));
      await extractTar({ file: archive, cwd: folder });
      change(folder);
      const manifest = JSON.parse(fs.readFileSync(path.join(folder, 'manifest.json'), 'utf8'));
      for (const table of BACKUP_TABLES.filter((name) => manifest.tables[name])) manifest.tables[table].sha256 = sha256(fs.readFileSync(path.join(folder, `tables/${table}.ndjson`)));
      const text = JSON.stringify(manifest);
      fs.writeFileSync(path.join(folder, 'manifest.json'), text);
      fs.writeFileSync(path.join(folder, 'manifest.json.sha256'), sha256(Buffer.from(text)));
      const rewritten = `${folder}.tar`;
      await createTar({ file: rewritten, cwd: folder }, fs.readdirSync(folder));
      return restoreBackup(target.storage, fileStoreFor(target.deps), rewritten, { workDir: dir, deliver: false, now: target.clock.now() }).catch((e: unknown) => e);
    }

    it('is refused when its checksums agree but its content is hostile, and leaves the target empty', async () => {
      const editManifest = (edit: (manifest: any) => void) => (folder: string) => {
        const file = path.join(folder, 'manifest.json');
        const manifest = JSON.parse(fs.readFileSync(file, 'utf8'));
        edit(manifest);
        fs.writeFileSync(file, JSON.stringify(manifest));
      };
      const refusals: [(folder: string) => void, RegExp][] = [
        [editManifest((m) => (m.files[0].storageKey = '../../etc/passwd')), /manifest\.json files\.0\.storageKey/],
        [
          (folder) => {
            // A key JSON.parse makes an own property of, where an object literal would set the prototype.
            const file = path.join(folder, 'manifest.json');
            fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/"tables":\s*\{/, '"tables":{"__proto__":{"columns":["id"],"rows":0,"sha256":"00"},'));
          },
          /not a backup this Plainbase reads: manifest\.json tables/,
        ],
        [editManifest((m) => delete m.tables.records), /not a backup this Plainbase reads: manifest\.json tables/],
        [editManifest((m) => (m.migrations = ['0001-foundation'])), /the backup is at migration 0001-foundation and this Plainbase at 00\d\d-/],
        [editManifest((m) => m.tables.people.columns.push('is_admin')), /the backup's columns of people are not this database's/],
        [(folder) => fs.appendFileSync(path.join(folder, 'tables/people.ndjson'), '["per_x","a@b.c","A","h","2026-01-01T00:00:00.000Z"]\n'), /tables\/people\.ndjson has \d+ rows, its manifest says \d+/],
        [(folder) => fs.appendFileSync(path.join(folder, 'tables/workspaces.ndjson'), '{not json\n'), /tables\/workspaces\.ndjson row \d+ is not JSON/],
        [(folder) => fs.appendFileSync(path.join(folder, 'tables/workspaces.ndjson'), '[{"a":1},"x","y"]\n'), /workspaces\.ndjson row \d+: id is not text, a number or null/],
        [(folder) => fs.symlinkSync('/etc/passwd', path.join(folder, 'files', 'link')), /holds entries a backup never has/],
      ];
      for (const [change, reason] of refusals) {
        const error = await restoreRewritten(change);
        expect(error, String(reason)).toBeInstanceOf(RestoreError);
        expect((error as Error).message).toMatch(reason);
      }
      for (const table of BACKUP_TABLES) expect(await rowsOf(target.deps.db, table), table).toEqual([]);
    });

    it('is refused when it is not an archive at all', async () => {
      const notTar = path.join(dir, 'not-a-backup.tar');
      fs.writeFileSync(notTar, 'hello, this is not a tar file\n'.repeat(40));
      const error = await restoreBackup(target.storage, fileStoreFor(target.deps), notTar, { workDir: dir, deliver: false, now: target.clock.now() }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RestoreError);
      expect(await rowsOf(target.deps.db, 'people')).toEqual([]);
    });
  });
}

/**
 * The real CLI as child processes, as a person moves from SQLite to PostgreSQL: `plainbase backup`
 * while the SQLite server runs, `plainbase restore` into a new PostgreSQL database, a second
 * restore refused, then a server on PostgreSQL that knows the owner.
 */
(hasPostgres ? describe : describe.skip)('moving to PostgreSQL with the CLI', () => {
  let server: ServerProcess | undefined;
  let database: { url: string; drop: () => Promise<void> };
  let dir: string;

  beforeAll(async () => {
    dir = tempDir('backup-cli');
    database = await createDatabase(inject('postgresUrl')!, 'backup_cli');
  });

  afterAll(async () => {
    await stopServer(server);
    await database?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const cli = (settings: Record<string, string>, args: string[]) => runCli(args, settings);


  it('backs up a running SQLite service and restores it into PostgreSQL, once', async () => {
    const sqliteSettings = { PLAINBASE_DATA_DIR: path.join(dir, 'sqlite') };
    server = await startServer(sqliteSettings);
    const session = await signInOwner(server.base);
    expect((await call(server.base, 'POST', '/v1/collections', session, { name: 'moved' })).status).toBe(201);

    const archive = path.join(dir, 'move.tar');
    const backup = await cli(sqliteSettings, ['backup', '--out', archive]);
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stdout).toBe(`${archive}\n`);
    expect(backup.stderr).toMatch(/^backed up \d+ rows of \d+ tables and 0 files \(\d+ bytes\), at migration 00\d\d-[a-z-]+\n$/);
    await stopServer(server);

    const postgresSettings = { PLAINBASE_DATABASE_URL: database.url, PLAINBASE_DATA_DIR: path.join(dir, 'postgres') };
    const restored = await cli(postgresSettings, ['restore', archive]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toMatch(/^restored \d+ rows and 0 files from .*move\.tar \(taken .* on sqlite\)\n$/);

    const again = await cli(postgresSettings, ['restore', archive, '--deliver']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^plainbase: the database is not empty: it has workspaces \(ws_\w+ "default"\); restore fills an empty database only\n$/);
    expect((await cli(postgresSettings, ['restore'])).stderr).toBe('plainbase: restore needs the backup file: plainbase restore <file>\n');

    server = await startServer(postgresSettings);
    const collections = await call(server.base, 'GET', '/v1/collections', await signInOwner(server.base));
    expect(collections.body.data.map((c: { name: string }) => c.name)).toEqual(['moved']);
  }, 240_000);
});

for (const engine of ENGINES) {
  (engine === 'postgres' && !hasPostgres ? describe.skip : describe)(`a backup while writes go on [${engine}]`, () => {
    let source: TestApp;
    let dir: string;

    beforeAll(async () => {
      dir = tempDir('backup-live');
      source = await startTestApp(engine, { env: 'development', webhookAllowPrivate: true, dataDir: dir });
    }, 120_000);

    afterAll(async () => {
      await source?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('lets a write commit while its snapshot is open, and holds the database as it was when the snapshot opened', async () => {
      const filled = await fillSource(source);
      // The backup reads the files last, inside its snapshot: the store holds it there until the write is done.
      const store = fileStoreFor(source.deps);
      let reached!: () => void;
      const atFiles = new Promise<void>((resolve) => (reached = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const held: FileStore = {
        read: async (...args) => (reached(), await released, store.read(...args)),
        write: (...args) => store.write(...args),
        remove: (key) => store.remove(key),
        close: async () => undefined,
      };
      const archive = path.join(dir, 'live.tar');
      const backup = writeBackup(source.storage, held, archive, source.clock.now());
      await atFiles;
      const written = await new KeyClient(source, filled.keySecret).post('/v1/collections/leads/records', { data: { title: 'written during the backup' } });
      expect(written.status).toBe(201);
      release();
      const { manifest } = await backup;

      const unpacked = fs.mkdtempSync(path.join(dir, 'unpacked-'));
      await extractTar({ file: archive, cwd: unpacked });
      const records = fs.readFileSync(path.join(unpacked, 'tables/records.ndjson'), 'utf8');
      expect(records).toContain(filled.recordId);
      expect(records).not.toContain(written.body.id);
      expect(manifest.tables.records.rows).toBe(2);
      expect(await rowsOf(source.deps.db, 'records')).toHaveLength(3);

      // A file whose content the store lost: no backup, and nothing left behind beside --out.
      await store.remove((await source.deps.db.selectFrom('files').select('storage_key').executeTakeFirstOrThrow()).storage_key);
      const failed = path.join(dir, 'out', 'failed.tar');
      fs.mkdirSync(path.dirname(failed));
      const error = await writeBackup(source.storage, store, failed, source.clock.now()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BackupError);
      expect((error as Error).message).toMatch(new RegExp(`^the content of file ${filled.fileId} \\(ws_\\w+/col_\\w+/${filled.fileId}\\) cannot be read: .*run the backup again$`));
      expect(fs.readdirSync(path.dirname(failed))).toEqual([]);

      // --deliver: the webhooks keep the state they had.
      const target = await startTestApp(engine, { dataDir: path.join(dir, 'target') });
      try {
        const { heldWebhooks } = await restoreBackup(target.storage, fileStoreFor(target.deps), archive, { workDir: dir, deliver: true, now: target.clock.now() });
        expect(heldWebhooks).toBe(0);
        expect(await target.deps.db.selectFrom('webhooks').select(['id', 'enabled', 'disabled_reason']).execute()).toEqual([{ id: filled.webhookId, enabled: 1, disabled_reason: null }]);
      } finally {
        await target.close();
      }
    });
  });
}
