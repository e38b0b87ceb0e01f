import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Executor } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { conflict, forbidden } from '../../errors.js';
import { recordAudit, type Actor, type RequestMeta } from '../audit/audit.js';
import { findFirstPerson, type Person } from '../people/people.js';
import { ownsAnyWorkspace } from '../workspaces/workspaces.js';
import { writeBackup, type BackupSummary } from './write-backup.js';

/**
 * The name of every backup the service takes, and of `plainbase backup`'s default: the time it
 * was started (or scheduled for), so names sort as times do. The routes accept nothing else.
 */
export const BACKUP_NAME = /^plainbase-(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z\.tar$/;

export const backupName = (at: Date): string => `plainbase-${at.toISOString().replace(/[:.]/g, '-')}.tar`;

/** The time in a backup's name, as ISO 8601. */
export function backupTime(name: string): string {
  const [, day, hours, minutes, seconds, milliseconds] = BACKUP_NAME.exec(name)!;
  return `${day}T${hours}:${minutes}:${seconds}.${milliseconds}Z`;
}

/** A run whose process has not said it is alive for this long died: it no longer blocks another. */
export const RUN_DEAD_AFTER_MS = 2 * 60_000;
const ALIVE_EVERY_MS = 20_000;
/** Rows of finished runs are kept this long (they are what makes a tick taken once). */
const RUNS_KEPT_MS = 30 * 24 * 3600_000;

export interface BackupListing {
  name: string;
  size: number;
  createdAt: string;
}

/** The backups kept, newest first. */
export async function listBackups(deps: Pick<Deps, 'services'>): Promise<BackupListing[]> {
  const archives = (await deps.services.archiveShelf.list()).filter((archive) => BACKUP_NAME.test(archive.name));
  archives.sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
  return archives.map((archive) => ({ name: archive.name, size: archive.size, createdAt: backupTime(archive.name) }));
}

/** A kept backup's content, or null for a name that is not a backup's or not kept. */
export async function readBackup(deps: Pick<Deps, 'services'>, name: string): Promise<{ content: Readable; size: number } | null> {
  if (!BACKUP_NAME.test(name)) return null;
  return deps.services.archiveShelf.read(name);
}

/**
 * Backups hold every workspace, so only the person who runs the instance may take or read them:
 * the first person (the owner made at setup or from PLAINBASE_OWNER_EMAIL), while they still own a
 * workspace. Owning some workspace is not enough: anyone may create one.
 */
export async function checkBackupOperator(executor: Executor, person: Person): Promise<void> {
  const first = await findFirstPerson(executor);
  if (first?.id !== person.id || !(await ownsAnyWorkspace(executor, person.id))) {
    throw forbidden('Backups hold every workspace of this Plainbase: only its first owner may take or download them.');
  }
}

type Trigger = 'schedule' | 'request';

/**
 * Claims a run: one row, with `running` set, inserted only if no row has its name (a tick
 * another process took) and none is running (its unique index). Runs whose process died are
 * let go first. The claim is one statement, and so is its audit entry after it: on SQLite a
 * transaction held across the two would make another process's claim wait on the file lock
 * (and, for two apps in one process, wait synchronously on the very thread that must commit it).
 */
async function claimRun(deps: Deps, name: string, trigger: Trigger, actor: Actor, meta: RequestMeta): Promise<boolean> {
  const now = deps.clock.now();
  await deps.db
    .updateTable('backup_runs')
    .set({ running: null, finished_at: now.toISOString(), failure: 'its process stopped while it ran' })
    .where('running', '=', 1)
    .where('alive_at', '<', new Date(now.getTime() - RUN_DEAD_AFTER_MS).toISOString())
    .execute();
  const inserted = await deps.db
    .insertInto('backup_runs')
    .values({ name, trigger, running: 1, person_id: actor.type === 'person' ? actor.id : null, started_at: now.toISOString(), alive_at: now.toISOString(), finished_at: null, failure: null })
    .onConflict((onConflict) => onConflict.doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return false;
  await recordAudit(deps.db, now, meta, { workspaceId: null, actor, action: 'backup.started', target: { type: 'backup', id: name }, details: { trigger } });
  return true;
}

async function runningBackup(executor: Executor): Promise<string | null> {
  const row = await executor.selectFrom('backup_runs').select('name').where('running', '=', 1).executeTakeFirst();
  return row?.name ?? null;
}

export interface StartedBackup {
  name: string;
  startedAt: string;
  /** Settles when the archive is kept (or the run failed). */
  done: Promise<BackupSummary>;
}

/**
 * A backup a person asked for, started now and written in the background of this process.
 * Refused (409) while another backup runs in any process.
 */
export async function startRequestedBackup(deps: Deps, person: Person, meta: RequestMeta): Promise<StartedBackup> {
  await checkBackupOperator(deps.db, person);
  const now = deps.clock.now();
  const name = backupName(now);
  if (!(await claimRun(deps, name, 'request', { type: 'person', id: person.id, name: person.name }, meta))) {
    const running = await runningBackup(deps.db);
    throw conflict(running ? `A backup is being taken (${running}); start another once it is done.` : `A backup named ${name} exists already; try again.`, { running });
  }
  return { name, startedAt: now.toISOString(), done: runClaimed(deps, name) };
}

/**
 * The scheduled backup of `tick`: every process that wakes for the tick calls this, and only the
 * one whose claim lands takes it (null for the others, and when another backup is running then).
 */
export async function takeScheduledBackup(deps: Deps, tick: Date): Promise<BackupSummary | null> {
  const name = backupName(tick);
  const claimed = await claimRun(deps, name, 'schedule', { type: 'system', id: null, name: 'backup schedule' }, { ip: null, userAgent: null, requestId: null });
  return claimed ? runClaimed(deps, name) : null;
}

/** Writes the claimed run's archive, puts it on the shelf, keeps the newest `backupKeep`, and closes the run. */
async function runClaimed(deps: Deps, name: string): Promise<BackupSummary> {
  const shelf = deps.services.archiveShelf;
  const alive = setInterval(() => {
    void deps.db.updateTable('backup_runs').set({ alive_at: deps.clock.now().toISOString() }).where('name', '=', name).execute().catch(() => undefined);
  }, ALIVE_EVERY_MS);
  alive.unref();
  const staged = path.join(shelf.stagingDir, `.staging-${name}`);
  let summary: BackupSummary;
  try {
    fs.mkdirSync(shelf.stagingDir, { recursive: true, mode: 0o700 });
    summary = await writeBackup(deps, deps.services.fileStore, staged, deps.clock.now());
    await shelf.put(name, staged);
  } catch (error) {
    await finishRun(deps, name, (error as Error).message.slice(0, 1000)).catch(() => undefined);
    throw error;
  } finally {
    clearInterval(alive);
    fs.rmSync(staged, { force: true });
  }
  await finishRun(deps, name, null);
  // The backup is kept whatever happens here; a failed clean-up is tried again after the next one.
  await keepNewest(deps);
  return { ...summary, file: name };
}

async function finishRun(deps: Deps, name: string, failure: string | null): Promise<void> {
  const now = deps.clock.now();
  await deps.db.updateTable('backup_runs').set({ running: null, finished_at: now.toISOString(), failure }).where('name', '=', name).execute();
  await deps.db.deleteFrom('backup_runs').where('running', 'is', null).where('started_at', '<', new Date(now.getTime() - RUNS_KEPT_MS).toISOString()).execute();
}

/** Deletes every backup but the newest `backupKeep` (archives named otherwise are not the service's and stay). */
async function keepNewest(deps: Deps): Promise<void> {
  const kept = await listBackups(deps);
  for (const old of kept.slice(deps.config.backupKeep)) await deps.services.archiveShelf.remove(old.name);
}
