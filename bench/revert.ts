/**
 * Undo what one caller did (`npm run bench:revert`): how long POST /v1/history/revert's work takes
 * for BENCH_RECORDS records (100,000) that one API key updated, on each engine, against a baseline
 * measured in the same run: the time it took to make those updates. A report, never a test: exits
 * 0 whatever the figures, 1 only when it could not run.
 *
 * In-process, through the module functions the routes call (no HTTP in front, which would measure
 * the HTTP layer): for each engine, a fresh SQLite file or PostgreSQL database, migrated; an owner
 * and a collection; BENCH_RECORDS records written in bulk (not timed); then
 *   1. baselines: every record changed by one key, the rows a PATCH writes (record, version,
 *      event) written in bulk, 1,000 per transaction, timed; then BENCH_SAMPLE (2,000) of them
 *      updated again through updateRecord (the PATCH's own function, BENCH_CONCURRENCY at a
 *      time), timed, for the rate of updates one at a time (100,000 of those take minutes, so
 *      they are sampled, not made);
 *   2. the dry run of the revert, timed;
 *   3. the revert, timed; then checked: every record is back to its imported data.
 * No ANALYZE runs between the writes and the revert: its queries meet tables that just grew, as
 * after a runaway script.
 *
 * Env: BENCH_RECORDS (100000), BENCH_ENGINES ("sqlite,postgres"), BENCH_CONCURRENCY (16), BENCH_SAMPLE (2000),
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
import { emitEvents } from '../src/modules/events/outbox.js';
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
  sample: wholeNumber('BENCH_SAMPLE', 2000, 1),
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

    // 1. The runaway key's changes. Every record gets a PATCH's rows (the new data and revision,
    // a version naming the key, a record.updated event), written in bulk a batch per transaction:
    // the baseline, the same kind of writes the revert makes, without its reads. Then a sample
    // goes through updateRecord, the PATCH's own function, for the rate of updates one at a time.
    const keyActor = { type: 'key' as const, id: newId('key'), name: 'runaway script' };
    const keyContext: CollectionContext = { workspaceId: workspace.id, actor: keyActor, meta };
    const since = new Date().toISOString();
    const broken = { status: 'broken' };
    const bulkStart = process.hrtime.bigint();
    for (let start = 0; start < ids.length; start += SETUP_BATCH) {
      const batch = ids.slice(start, start + SETUP_BATCH);
      const now = new Date();
      await deps.db.transaction().execute(async (trx) => {
        const rows = await trx.updateTable('records')
          .set((eb) => ({ data: writeJson(broken), revision: eb('revision', '+', 1), updated_at: now.toISOString() }))
          .where('workspace_id', '=', workspace.id).where('id', 'in', batch)
          .returning(['id', 'workspace_id', 'collection_id', 'data', 'schema_version', 'revision'])
          .execute();
        await insertRows(trx, 'record_versions', VERSION_COLUMNS, rows.map((row) => newVersionRow({ ...row, data: writeJson(broken) }, 'updated', now, keyContext)));
        await emitEvents(trx, now, rows.map((row) => ({ workspaceId: workspace.id, collectionId: collection.id, type: 'record.updated' as const, data: { record: { id: row.id, data: broken } } })));
      });
    }
    const bulkSeconds = seconds(bulkStart);
    const sample = ids.slice(0, Math.min(settings.sample, ids.length));
    const sampleStart = process.hrtime.bigint();
    let next = 0;
    await Promise.all(Array.from({ length: settings.concurrency }, async () => {
      while (next < sample.length) {
        const id = sample[next++]!;
        await updateRecord(deps!, keyContext, collection.id, id, { data: { note: 'broken too' }, mode: 'merge' });
      }
    }));
    const perUpdate = seconds(sampleStart) / sample.length;

    // 2. The dry run, then 3. the revert.
    const body = { actor: { type: 'key' as const, id: keyActor.id }, since };
    const dryStart = process.hrtime.bigint();
    const dry = await revertActor(deps, ownerContext, { ...body, dryRun: true });
    const drySeconds = seconds(dryStart);
    const revertStart = process.hrtime.bigint();
    const done = await revertActor(deps, ownerContext, body);
    const revertSeconds = seconds(revertStart);

    // Every record back as it was imported.
    const rows = await deps.db.selectFrom('records').select(['id', 'data']).where('workspace_id', '=', workspace.id).execute();
    const wrong = rows.filter((row) => (deps!.dialect.readJson(row.data) as { status?: string; note?: string }).status !== 'new').length;
    const ok = done.reverted === settings.records && wrong === 0 && rows.length === settings.records;
    const scaled = revertSeconds * (100_000 / settings.records);
    console.log(`${engine}, ${thousands(settings.records)} records changed by one key (load ${fixed(loadAverage(), 1)}):`);
    console.log(`  baseline: the key's changes written in bulk (rows, versions, events; ${SETUP_BATCH} per transaction) ${fixed(bulkSeconds, 1)} s = ${thousands(settings.records / bulkSeconds)}/s`);
    console.log(`  baseline: updates one at a time (updateRecord, ${settings.concurrency} at once, ${thousands(sample.length)} sampled) ${thousands(1 / perUpdate)}/s, so ${fixed(perUpdate * settings.records, 1)} s for all`);
    console.log(`  dry run ${fixed(drySeconds, 1)} s (would revert ${thousands(dry.reverted)})`);
    console.log(`  revert ${fixed(revertSeconds, 1)} s = ${thousands(settings.records / revertSeconds)}/s (reverted ${thousands(done.reverted)}, conflicts ${done.conflicts.length}${ok ? ', all back as imported' : `, ${wrong} NOT BACK`})`);
    console.log(`  revert / bulk writes = ${fixed(revertSeconds / bulkSeconds, 2)}; revert / updates one at a time = ${fixed(revertSeconds / (perUpdate * settings.records), 3)}`);
    console.log(`  target: 100,000 within ${TARGET_SECONDS} s: ${fixed(scaled, 1)} s ${scaled <= TARGET_SECONDS ? 'PASS' : 'MISS'}`);
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
