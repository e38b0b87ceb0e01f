import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { list as listTar } from 'tar';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { backupName, listBackups, readBackup, RUN_DEAD_AFTER_MS, startRequestedBackup } from '../src/modules/backups/backup-runs.js';
import { BackupSchedule } from '../src/worker/backup-schedule.js';
import { signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, startTestAppBeside, type TestApp } from './support/harness.js';
import { startTestS3, type TestS3 } from './support/s3-server.js';

const HOUR = 3_600_000;
const silent = { info: () => undefined, warn: () => undefined };

async function archiveEntries(file: string): Promise<string[]> {
  const entries: string[] = [];
  await listTar({ file, onReadEntry: (entry) => entries.push(entry.path) });
  return entries;
}

it('refuses a schedule that is not a five-field cron pattern at start, naming the variable', () => {
  const load = (schedule: string) => loadConfig({ PLAINBASE_BACKUP_SCHEDULE: schedule, PLAINBASE_DATA_DIR: os.tmpdir() });
  for (const bad of ['every day', '61 * * * *', '0 3 * * * *', '2026-12-01T00:00:00Z', '0 0 31 2 *']) {
    expect(() => load(bad), bad).toThrow(ConfigError);
    expect(() => load(bad), bad).toThrow(/^PLAINBASE_BACKUP_SCHEDULE: must be a cron schedule of five fields/);
  }
  expect(load('0 3 * * *')).toMatchObject({ backupSchedule: '0 3 * * *', backupKeep: 7 });
  expect(load('@hourly').backupSchedule).toBe('@hourly');
  expect(() => loadConfig({ PLAINBASE_BACKUP_KEEP: '0' })).toThrow(/^PLAINBASE_BACKUP_KEEP: must be at least 1/);
  expect(loadConfig({ PLAINBASE_BACKUP_KEEP: '3' }).backupKeep).toBe(3);
});

let s3: TestS3;
beforeAll(async () => {
  s3 = await startTestS3();
});
afterAll(async () => {
  await s3?.close();
});

/**
 * Scheduled backups (docs/backups.md): each tick of the schedule is taken by exactly one of the
 * processes on the database, written to the data folder (or the bucket), and only the newest
 * PLAINBASE_BACKUP_KEEP are kept. Time moves with the test's clock.
 */
describeEachEngine('scheduled backups', (engine) => {
  const opened: TestApp[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const app of opened.splice(0).reverse()) await app.close();
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  const twoProcesses = async (overrides: Parameters<typeof startTestApp>[1] = {}) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-backups-'));
    dirs.push(dataDir);
    const t = await startTestApp(engine, { dataDir, backupSchedule: '0 * * * *', backupKeep: 2, ...overrides });
    opened.push(t);
    const other = await startTestAppBeside(t);
    opened.push(other);
    const owner = await signedInOwner(t);
    expect((await owner.post('/v1/collections', { name: 'leads' })).status).toBe(201);
    expect((await owner.post('/v1/collections/leads/records', { data: { n: 1 } })).status).toBe(201);
    return { t, other, dataDir, owner, schedules: [t, other].map((app) => new BackupSchedule(app.deps, '0 * * * *', silent)) };
  };
  const runs = async (t: TestApp) => t.deps.db.selectFrom('backup_runs').selectAll().orderBy('name').execute();

  it('takes each tick once over two processes, into the data folder, and keeps the newest two', async () => {
    const { t, dataDir, schedules } = await twoProcesses();
    const ticks: Date[] = [];
    for (let round = 0; round < 3; round++) {
      const tick = schedules[0]!.nextTick()!;
      expect(schedules[1]!.nextTick()).toEqual(tick);
      expect(tick.toISOString()).toMatch(/T\d{2}:00:00\.000Z$/);
      t.clock.advance(tick.getTime() - t.clock.now().getTime());
      ticks.push(tick);
      const taken = await Promise.all(schedules.map((schedule) => schedule.runTick(tick)));
      expect(taken.filter((summary) => summary !== null), `tick ${tick.toISOString()}`).toHaveLength(1);
      // A process that wakes late for the same tick finds it taken.
      expect(await schedules[1]!.runTick(tick)).toBeNull();
    }
    const names = ticks.map(backupName);
    expect((await listBackups(t.deps)).map((backup) => backup.name)).toEqual([names[2], names[1]]);
    expect(fs.readdirSync(path.join(dataDir, 'backups')).sort()).toEqual([names[1], names[2]]);
    expect(await archiveEntries(path.join(dataDir, 'backups', names[2]!))).toEqual(expect.arrayContaining(['manifest.json', 'tables/records.ndjson']));
    const rows = await runs(t);
    expect(rows.map((row) => [row.name, row.trigger, row.running, row.failure])).toEqual(names.map((name) => [name, 'schedule', null, null]));
    const audit = await t.deps.db.selectFrom('audit_log').select(['workspace_id', 'actor_type', 'target_id']).where('action', '=', 'backup.started').orderBy('target_id').execute();
    expect(audit).toEqual(names.map((name) => ({ workspace_id: null, actor_type: 'system', target_id: name })));
  });

  it('skips a tick while another backup runs, and lets go of a run whose process died', async () => {
    const { t, other, schedules } = await twoProcesses();
    const tick = schedules[0]!.nextTick()!;
    t.clock.advance(tick.getTime() - t.clock.now().getTime());
    // Another process is writing a backup: its run is claimed and alive.
    await t.deps.db.insertInto('backup_runs').values({ name: backupName(t.clock.now()), trigger: 'request', running: 1, person_id: null, started_at: t.clock.now().toISOString(), alive_at: t.clock.now().toISOString(), finished_at: null, failure: null }).execute();
    expect(await Promise.all(schedules.map((schedule) => schedule.runTick(tick)))).toEqual([null, null]);
    expect(await listBackups(t.deps)).toEqual([]);

    // That process died: two minutes without a sign of life, and the next tick is taken.
    t.clock.advance(HOUR);
    expect(RUN_DEAD_AFTER_MS).toBeLessThan(HOUR);
    const next = schedules[1]!.nextTick()!;
    expect(await schedules[1]!.runTick(next)).not.toBeNull();
    const rows = await runs(other);
    expect(rows.map((row) => [row.running, row.failure])).toEqual([[null, 'its process stopped while it ran'], [null, null]]);
  });

  it('runs on its timer when the clock reaches the tick, and not before', async () => {
    const { t, dataDir } = await twoProcesses();
    const schedule = new BackupSchedule(t.deps, '0 * * * *', silent);
    const tick = schedule.nextTick()!;
    t.clock.advance(tick.getTime() - t.clock.now().getTime() - 30);
    schedule.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(fs.existsSync(path.join(dataDir, 'backups'))).toBe(false);
      t.clock.advance(30);
      const deadline = Date.now() + 20_000;
      while ((await listBackups(t.deps)).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await listBackups(t.deps)).map((backup) => backup.name)).toEqual([backupName(tick)]);
    } finally {
      await schedule.stop();
    }
  });

  it('with files in S3, keeps the backups under backups/ in the bucket, the newest one only', async () => {
    const { t, owner, schedules } = await twoProcesses({ s3: s3.settings, backupKeep: 1 });
    const file = await t.app.inject({ method: 'POST', url: '/v1/collections/leads/files?name=a.bin', headers: { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': owner.workspaceId!, 'content-type': 'application/octet-stream' }, payload: Buffer.alloc(1000, 7) });
    expect(file.statusCode, file.body).toBe(201);
    const names: string[] = [];
    for (let round = 0; round < 2; round++) {
      const tick = schedules[0]!.nextTick()!;
      t.clock.advance(tick.getTime() - t.clock.now().getTime());
      names.push(backupName(tick));
      expect((await Promise.all(schedules.map((schedule) => schedule.runTick(tick)))).filter(Boolean)).toHaveLength(1);
    }
    expect(await s3.keys('backups/')).toEqual([`backups/${names[1]}`]);
    const listed = await listBackups(t.deps);
    expect(listed.map((backup) => backup.name)).toEqual([names[1]]);
    const archive = await readBackup(t.deps, names[1]!);
    const chunks: Buffer[] = [];
    for await (const chunk of archive!.content) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).length).toBe(listed[0]!.size);
    // Nothing is left behind locally once the archive is in the bucket.
    expect(fs.readdirSync(t.deps.services.archiveShelf.stagingDir)).toEqual([]);
  });

  it('a backup asked for and the schedule share the one-at-a-time claim', async () => {
    const { t, owner, schedules } = await twoProcesses();
    const person = { id: owner.personId, email: 'owner@example.com', name: 'Olive Owner' };
    const tick = schedules[0]!.nextTick()!;
    t.clock.advance(tick.getTime() - t.clock.now().getTime() - 1000);
    const started = await startRequestedBackup(t.deps, person, { ip: null, userAgent: null, requestId: null });
    t.clock.advance(1000);
    const whileRunning = await schedules[1]!.runTick(tick);
    await started.done;
    expect(whileRunning).toBeNull();
    expect((await listBackups(t.deps)).map((backup) => backup.name)).toEqual([started.name]);
  });

  it('a backup that fails keeps nothing, closes its run with the reason, and lets the next one run', async () => {
    const { t, owner, schedules, dataDir } = await twoProcesses();
    const file = await t.app.inject({ method: 'POST', url: '/v1/collections/leads/files?name=a.bin', headers: { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': owner.workspaceId!, 'content-type': 'application/octet-stream' }, payload: Buffer.alloc(100, 1) });
    expect(file.statusCode, file.body).toBe(201);
    const { storage_key: storageKey } = await t.deps.db.selectFrom('files').select('storage_key').executeTakeFirstOrThrow();
    await t.deps.services.fileStore.remove(storageKey);
    const tick = schedules[0]!.nextTick()!;
    t.clock.advance(tick.getTime() - t.clock.now().getTime());
    await expect(schedules[0]!.runTick(tick)).rejects.toThrow(/cannot be read/);
    expect(await listBackups(t.deps)).toEqual([]);
    expect(fs.readdirSync(path.join(dataDir, 'backups'))).toEqual([]);
    const [run] = await runs(t);
    expect(run).toMatchObject({ name: backupName(tick), running: null, failure: expect.stringMatching(/cannot be read/) });
    // Not running any more: the next tick is taken.
    await t.deps.services.fileStore.write(storageKey, Readable.from([Buffer.alloc(100, 1)]));
    const next = schedules[1]!.nextTick(tick)!;
    t.clock.advance(next.getTime() - t.clock.now().getTime());
    expect(await schedules[1]!.runTick(next)).not.toBeNull();
    expect((await listBackups(t.deps)).map((backup) => backup.name)).toEqual([backupName(next)]);
  });
});
