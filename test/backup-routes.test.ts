import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { backupName } from '../src/modules/backups/backup-runs.js';
import { addMember, Client, expectError, inNewWorkspace, KeyClient, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, startTestAppBeside, type TestApp } from './support/harness.js';

/**
 * The backup routes (docs/backups.md, "From the API"): only the instance's first owner, with a
 * session, lists, starts and downloads backups; everyone else is refused with the usual codes;
 * names are checked strictly, so nothing but a kept archive can be read.
 */
describeEachEngine('backup routes', (engine) => {
  const opened: TestApp[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const app of opened.splice(0).reverse()) await app.close();
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  const start = async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-backup-routes-'));
    dirs.push(dataDir);
    const t = await startTestApp(engine, { dataDir });
    opened.push(t);
    const owner = await signedInOwner(t);
    expect((await owner.post('/v1/collections', { name: 'leads' })).status).toBe(201);
    expect((await owner.post('/v1/collections/leads/records', { data: { n: 1 } })).status).toBe(201);
    return { t, owner, shelf: path.join(dataDir, 'backups') };
  };
  const waitForBackup = async (client: Client, name: string): Promise<{ name: string; size: number; createdAt: string }> => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const listed = await client.get('/v1/backups');
      expect(listed.status).toBe(200);
      const found = listed.body.data.find((backup: { name: string }) => backup.name === name);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`backup ${name} never appeared`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it('the first owner starts a backup (202, its name), sees it listed, downloads the tar; the start is audited', async () => {
    const { t, owner } = await start();
    expect((await owner.get('/v1/backups')).body).toEqual({ data: [], nextCursor: null });
    const started = await owner.post('/v1/backups');
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    expect(started.body).toEqual({ name: backupName(t.clock.now()), startedAt: t.clock.now().toISOString(), status: 'running' });
    const listed = await waitForBackup(owner, started.body.name);
    expect(listed).toEqual({ name: started.body.name, size: expect.any(Number), createdAt: t.clock.now().toISOString() });

    const download = await t.app.inject({ method: 'GET', url: `/v1/backups/${started.body.name}/content`, headers: { cookie: `plainbase_session=${owner.cookie}` } });
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('application/x-tar');
    expect(download.headers['content-disposition']).toBe(`attachment; filename="${started.body.name}"; filename*=UTF-8''${started.body.name}`);
    expect(download.rawPayload.length).toBe(listed.size);
    // A tar's first entry header names its first part: the manifest.
    expect(download.rawPayload.subarray(0, 100).toString('latin1').replace(/\0+$/, '')).toBe('manifest.json');

    const audit = await t.deps.db.selectFrom('audit_log').select(['workspace_id', 'actor_type', 'actor_id', 'target_id', 'request_id']).where('action', '=', 'backup.started').execute();
    expect(audit).toEqual([{ workspace_id: null, actor_type: 'person', actor_id: owner.personId, target_id: started.body.name, request_id: started.headers['x-request-id'] }]);
  });

  it('refuses a second start while a backup runs in any process (409 CONFLICT naming it)', async () => {
    const { t, owner } = await start();
    const other = await startTestAppBeside(t);
    opened.push(other);
    // Another process is taking one: its run is claimed and alive.
    const running = backupName(new Date(t.clock.now().getTime() - 1000));
    const now = t.clock.now().toISOString();
    await other.deps.db.insertInto('backup_runs').values({ name: running, trigger: 'schedule', running: 1, person_id: null, started_at: now, alive_at: now, finished_at: null, failure: null }).execute();
    const refused = expectError(await owner.post('/v1/backups'), 409, 'CONFLICT');
    expect(refused.details).toEqual({ running });
    expect(await t.deps.db.selectFrom('audit_log').select('id').where('action', '=', 'backup.started').execute()).toEqual([]);
    await other.deps.db.updateTable('backup_runs').set({ running: null, finished_at: now }).execute();
    const started = await owner.post('/v1/backups');
    expect(started.status).toBe(202);
    await waitForBackup(owner, started.body.name);
  });

  it('pages the list newest first by name; a cursor it did not make is 400', async () => {
    const { owner, shelf } = await start();
    fs.mkdirSync(shelf, { recursive: true });
    const names = ['2026-11-20T03:00:00.000Z', '2026-11-21T03:00:00.000Z', '2026-11-22T03:00:00.000Z'].map((at) => backupName(new Date(at)));
    for (const [index, name] of names.entries()) fs.writeFileSync(path.join(shelf, name), Buffer.alloc(index + 1));
    // What is not a backup's name is not listed: another file, a partial archive, a folder.
    fs.writeFileSync(path.join(shelf, 'notes.txt'), 'x');
    fs.writeFileSync(path.join(shelf, `${names[0]}.partial`), 'x');
    fs.mkdirSync(path.join(shelf, backupName(new Date('2026-11-23T03:00:00.000Z'))));
    const first = await owner.get('/v1/backups?limit=2');
    expect(first.body.data).toEqual([
      { name: names[2], size: 3, createdAt: '2026-11-22T03:00:00.000Z' },
      { name: names[1], size: 2, createdAt: '2026-11-21T03:00:00.000Z' },
    ]);
    const second = await owner.get(`/v1/backups?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body).toEqual({ data: [{ name: names[0], size: 1, createdAt: '2026-11-20T03:00:00.000Z' }], nextCursor: null });
    expectError(await owner.get(`/v1/backups?cursor=${Buffer.from('../etc').toString('base64url')}`), 400, 'INVALID_REQUEST');
    expectError(await owner.get('/v1/backups?limit=0'), 400, 'INVALID_REQUEST');
    expectError(await owner.get('/v1/backups?sort=name'), 400, 'INVALID_REQUEST');
  });

  it('answers hostile names with 400 or 404, never a file outside the backups', async () => {
    const { t, owner, shelf } = await start();
    fs.mkdirSync(shelf, { recursive: true });
    fs.writeFileSync(path.join(shelf, 'secret.tar'), 'not a backup');
    fs.writeFileSync(path.join(shelf, `.staging-${backupName(new Date('2026-11-20T03:00:00.000Z'))}`), 'half written');
    const download = (name: string) => t.app.inject({ method: 'GET', url: `/v1/backups/${name}/content`, headers: { cookie: `plainbase_session=${owner.cookie}` } });
    const hostile = [
      '..%2Fplainbase.db', '%2e%2e%2f%2e%2e%2fetc%2fpasswd', '..', '.', 'secret.tar', `.staging-${backupName(new Date('2026-11-20T03:00:00.000Z'))}`,
      `${backupName(new Date('2026-11-20T03:00:00.000Z'))}%00`, `${backupName(new Date('2026-11-20T03:00:00.000Z'))}%2F..%2F..%2Fplainbase.db`,
      `plainbase-2026-11-20T03-00-00-000Z.tar.partial`, 'x'.repeat(5000), '%C0%AE%C0%AE', 'plainbase-2026-11-20T03%3A00%3A00.000Z.tar',
    ];
    for (const name of hostile) {
      const reply = await download(name);
      expect([400, 404], `${name}: ${reply.statusCode} ${reply.body.slice(0, 200)}`).toContain(reply.statusCode);
      expect(JSON.parse(reply.body).error.code).toMatch(/^(INVALID_REQUEST|NOT_FOUND)$/);
    }
    // Well formed but not kept.
    expectError(await owner.get(`/v1/backups/${backupName(new Date('2026-11-20T03:00:00.000Z'))}/content`), 404, 'NOT_FOUND');
  });

  it('refuses everyone but the first owner: another workspace\'s owner, an admin, a key, no credential', async () => {
    const { t, owner, shelf } = await start();
    fs.mkdirSync(shelf, { recursive: true });
    const name = backupName(new Date('2026-11-20T03:00:00.000Z'));
    fs.writeFileSync(path.join(shelf, name), 'archive bytes');
    t.clock.advance(1000);
    const admin = await addMember(t, owner, 'admin@example.com', 'admin');
    // The admin owns a workspace of their own: owning some workspace is not enough.
    const ownWorkspace = await inNewWorkspace(t, admin, 'their own');
    const key = await owner.post('/v1/keys', { name: 'script', scopes: ['records:read'] });
    expect(key.status).toBe(201);
    const callers: [string, Client, number, string][] = [
      ['admin', admin, 403, 'FORBIDDEN'],
      ['owner of another workspace', ownWorkspace, 403, 'FORBIDDEN'],
      ['the owner\'s key', new KeyClient(t, key.body.secret), 403, 'PERSON_REQUIRED'],
      ['no credential', new Client(t), 401, 'UNAUTHENTICATED'],
    ];
    for (const [who, caller, status, code] of callers) {
      for (const reply of [await caller.get('/v1/backups'), await caller.post('/v1/backups'), await caller.get(`/v1/backups/${name}/content`)]) {
        expect(`${who}: ${reply.status} ${reply.body?.error?.code}`).toBe(`${who}: ${status} ${code}`);
      }
    }
    expect(await t.deps.db.selectFrom('backup_runs').select('name').execute()).toEqual([]);
    expect((await owner.get(`/v1/backups/${name}/content`)).body).toBe('archive bytes');
    // The first owner who gave up every workspace they owned is refused too.
    expect((await owner.post('/v1/workspace/transfer-ownership', { personId: admin.personId })).status).toBe(204);
    expectError(await owner.get('/v1/backups'), 403, 'FORBIDDEN');
  });
});
