import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig, prepareDirectories } from '../src/config.js';
import { signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * What a fresh service writes on its disk holds workspaces' data: no other local user may read
 * it. Folders it creates are 0700, its files 0600, whatever the process's umask lets through.
 */
const mode = (file: string) => fs.statSync(file).mode & 0o777;

/** Every folder and file under `root`, with its mode. */
function walk(root: string): { folders: Map<string, number>; files: Map<string, number> } {
  const folders = new Map<string, number>([[root, mode(root)]]);
  const files = new Map<string, number>();
  for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name);
    (entry.isDirectory() ? folders : files).set(full, mode(full));
  }
  return { folders, files };
}

describeEachEngine('modes of what the service creates', (engine) => {
  let root: string;
  let dataDir: string;
  let t: TestApp;
  let owner: Client;
  /** The umask the suite had: set to the usual 022 here, so that a stricter one cannot pass the test on its own. */
  let umask: number;

  beforeAll(async () => {
    umask = process.umask(0o022);
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-modes-'));
    dataDir = path.join(root, 'srv', 'data');
    // As the CLI prepares a new data folder before the service starts, under a usual umask.
    prepareDirectories(loadConfig({ PLAINBASE_DATA_DIR: dataDir }));
    t = await startTestApp(engine, { dataDir });
    owner = await signedInOwner(t);
    expect((await owner.post('/v1/collections', { name: 'leads' })).status).toBe(201);
  });
  afterAll(async () => {
    process.umask(umask);
    await t.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('the data folder and its folders are 0700; uploaded files, spooled imports and exports, and backups 0600', async () => {
    expect(mode(path.join(root, 'srv'))).toBe(0o700);
    expect(mode(dataDir)).toBe(0o700);
    expect((await owner.call('POST', '/v1/collections/leads/files?name=a.txt', 'private', { 'content-type': 'text/plain' })).status).toBe(201);
    expect((await owner.call('POST', '/v1/collections/leads/import', '{"n":1}\n', { 'content-type': 'application/x-ndjson' })).body).toMatchObject({ imported: 1 });
    const exported = await t.app.inject({ method: 'GET', url: '/v1/collections/leads/export', headers: { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': owner.workspaceId! } });
    expect(exported.statusCode).toBe(200);
    // A backup archive holds every secret of the service.
    const backup = await owner.post('/v1/backups');
    expect(backup.status).toBe(202);
    for (const deadline = Date.now() + 30_000; !(await owner.get('/v1/backups')).body.data.length; ) {
      if (Date.now() > deadline) throw new Error('the backup never appeared');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    const { folders, files } = walk(dataDir);
    // files/objects/… and files/tmp, imports, exports, backups: every folder the service made.
    expect([...folders.keys()].map((folder) => path.relative(dataDir, folder)).sort()).toEqual(expect.arrayContaining(['', 'backups', 'exports', 'files', 'files/objects', 'files/tmp', 'imports']));
    expect([...files.keys()].map((file) => path.relative(dataDir, file))).toContain(path.join('backups', backup.body.name));
    for (const [folder, folderMode] of folders) expect(folderMode.toString(8), folder).toBe('700');
    expect(files.size).toBeGreaterThanOrEqual(1);
    for (const [file, fileMode] of files) expect(fileMode.toString(8), file).toBe('600');
  });

  if (engine === 'sqlite') {
    it('the SQLite database and its -wal and -shm files are 0600', () => {
      const config = t.deps.config.database;
      if (config.engine !== 'sqlite') throw new Error('expected SQLite');
      for (const suffix of ['', '-wal', '-shm']) expect(mode(`${config.file}${suffix}`).toString(8), suffix || 'database').toBe('600');
    });
  }
});
