/**
 * Undo what one caller did (`npm run bench:revert`): how long POST /v1/history/revert's work takes
 * for BENCH_RECORDS records (100,000) that one API key updated, on each engine, against a baseline
 * measured in the same run: the time it took to make those updates. A report, never a test: exits
 * 0 whatever the figures, 1 only when it could not run.
 *
 * In-process, through the module functions the routes call (no HTTP in front, which would measure
 * the HTTP layer ten times over): for each engine, a fresh SQLite file or PostgreSQL database,
 * migrated; an owner and a collection; BENCH_RECORDS records written in bulk (not timed); then
 *   1. baseline: every record updated once by one key (updateRecord, the PATCH's own function,
 *      BENCH_CONCURRENCY at a time), timed;
 *   2. the dry run of the revert, timed;
 *   3. the revert, timed; then checked: every record is back to its first data.
 * No ANALYZE runs between the writes and the revert: its queries meet tables that just grew, as
 * after a runaway script.
 *
 * Env: BENCH_RECORDS (100000), BENCH_ENGINES ("sqlite,postgres"), BENCH_CONCURRENCY (16),
 * BENCH_PG_URL (postgres://postgres@127.0.0.1:5432).
 */
import path from 'node:path';
import { buildDeps, closeServices } from '../src/build-services.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { connectStorage } from '../src/db/connect.js';
import { writeJson } from '../src/db/dialect.js';
import { insertRows } from '../src/db/insert-rows.js';
import { migrateStorage } from '../src/db/migrate.js';
import type { Deps } from '../src/deps.js';
import { newId } from '../src/ids.js';
import { createCollection, type CollectionContext } from '../src/modules/collections/collections.js';
import { newVersionRow, VERSION_COLUMNS } from '../src/modules/history/record-versions.js';
import { RECORD_COLUMNS, newRecordRow } from '../src/modules/records/record-shape.js';
import { updateRecord } from '../src/modules/records/records.js';
import { revertActor } from '../src/modules/records/revert-actor.js';
import { createOwner } from '../src/modules/setup/first-owner.js';
import { benchPostgresUrl, createDatabase } from './support/databases.js';
import { loadAverage } from './support/memory.js';
import { cleanUpOnSignals, cleanupAll, makeTempDir } from './support/processes.js';
import { benchEngines, wholeNumber } from './support/settings.js';
import { fixed, thousands } from './support/table.js';

type Engine = 'sqlite' | 'postgres';
const TARGET_SECONDS = 60;
const SETUP_BATCH = 1000;

const settings = {
  records: wholeNumber('BENCH_RECORDS', 100_000, 10),
  concurrency: wholeNumber('BENCH_CONCURRENCY', 16, 1),
  engines: benchEngines(),
  pgUrl: benchPostgresUrl(),
};

const seconds = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e9;

async function benchEngine(engine: Engine): Promise<void> {
  const dataDir = makeTempDir(`plainbase-bench-revert-${engine}-`);
  const config = loadConfig({
    PLAINBASE_DATA_DIR: dataDir,
    PLAINBASE_DATABASE_URL: engine === 'postgres' ? await createDatabase(settings.pgUrl, 'revert') : `sqlite:${path.join(dataDir, 'plainbase.db')}`,
    PLAINBASE_LOG_LEVEL: 'warn',
  });
  const storage = await connectStorage(config.database);
  let deps: Deps | null = null;
  try {
    await migrateStorage(storage);
    deps = buildDeps(config, storage, systemClock);
    const { person, workspace } = await createOwner(deps, { email: 'owner@example.com', password: 'bench password 1', name: 'Owner' });
    const meta = { ip: null, userAgent: null, requestId: null };
    const ownerContext: CollectionContext = { workspaceId: workspace.id, actor: { type: 'person', id: person.id, name: person.name }, meta };
    const collection = await createCollection(deps, ownerContext, { name: 'bench' });

    // The records, as an import would leave them (not timed).
    const ids: string[] = [];
    const at = new Date(Date.now() - 60_000);
    for (let start = 0; start < settings.records; start += SETUP_BATCH) {
      const rows = Array.from({ length: Math.min(SETUP_BATCH, settings.records - start) }, (_, n) => newRecordRow({
        id: newId('rec', at.getTime()),
        workspaceId: workspace.id,
        collectionId: collection.id,
        dataJson: writeJson({ n: start + n, status: 'new', note: 'as imported' }),
        schemaVersion: null,
        at: at.toISOString(),
      }));
      await deps.db.transaction().execute(async (trx) => {
        await insertRows(trx, 'records', RECORD_COLUMNS, rows);
        await insertRows(trx, 'record_versions', VERSION_COLUMNS, rows.map((row) => newVersionRow(row, 'created', at, ownerContext)));
      });
      ids.push(...rows.map((row) => row.id));
    }

    // 1. Baseline: the runaway key updates every record once.
    const keyActor = { type: 'key' as const, id: newId('key'), name: 'runaway script' };
    const keyContext: CollectionContext = { workspaceId: workspace.id, actor: keyActor, meta };
    const since = new Date().toISOString();
    const updateStart = process.hrtime.bigint();
    let next = 0;
    await Promise.all(Array.from({ length: settings.concurrency }, async () => {
      while (next < ids.length) {
        const id = ids[next++]!;
        await updateRecord(deps!, keyContext, collection.id, id, { data: { status: 'broken', note: null }, mode: 'merge' });
      }
    }));
    const updateSeconds = seconds(updateStart);

    // 2. The dry run, then 3. the revert.
    const body = { actor: { type: 'key' as const, id: keyActor.id }, since };
    const dryStart = process.hrtime.bigint();
    const dry = await revertActor(deps, ownerContext, { ...body, dryRun: true });
    const drySeconds = seconds(dryStart);
    const revertStart = process.hrtime.bigint();
    const done = await revertActor(deps, ownerContext, body);
    const revertSeconds = seconds(revertStart);

    const left = await deps.db.selectFrom('records').select((eb) => eb.fn.countAll().as('n')).where('workspace_id', '=', workspace.id).where('revision', '!=', 3).executeTakeFirstOrThrow();
    const sample = await deps.db.selectFrom('records').select('data').where('id', '=', ids[ids.length - 1]!).executeTakeFirstOrThrow();
    const back = (deps.dialect.readJson(sample.data) as { status?: string }).status === 'new' && Number(left.n) === 0;
    const ok = done.reverted === settings.records && back;
    console.log(
      `${engine}: ${thousands(settings.records)} records updated by one key in ${fixed(updateSeconds, 1)} s (${thousands(settings.records / updateSeconds)}/s, ${settings.concurrency} at a time);` +
        ` dry run ${fixed(drySeconds, 1)} s (counted ${thousands(dry.reverted)});` +
        ` revert ${fixed(revertSeconds, 1)} s (${thousands(settings.records / revertSeconds)}/s, reverted ${thousands(done.reverted)}, conflicts ${done.conflicts.length}${ok ? '' : ', NOT ALL BACK'});` +
        ` revert / updates = ${fixed(revertSeconds / updateSeconds, 2)};` +
        ` target ${TARGET_SECONDS} s for 100,000: ${revertSeconds * (100_000 / settings.records) <= TARGET_SECONDS ? 'PASS' : 'MISS'}; load ${fixed(loadAverage(), 1)}`,
    );
  } finally {
    if (deps) await closeServices(deps);
    await storage.close();
  }
}

async function main(): Promise<void> {
  cleanUpOnSignals();
  try {
    for (const engine of settings.engines) await benchEngine(engine);
  } finally {
    await cleanupAll();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
