import { buildApp } from './app.js';
import { buildDeps, closeServices } from './build-services.js';
import { systemClock } from './clock.js';
import { PASSWORD_HASH_COST, redactDatabaseUrl, type Config } from './config.js';
import { connectStorage, type Storage } from './db/connect.js';
import { migrateStorage } from './db/migrate.js';
import type { Deps } from './deps.js';
import { trimMemoryWhenIdle } from './idle-memory.js';
import { logDestination } from './log-destination.js';
import { prepareFirstOwner } from './modules/setup/first-owner.js';

/**
 * The whole shutdown, from signal to exit, stays inside this (docs/operations.md: within 10 s);
 * the log's last flush may add up to 1 s when stdout is not being read (log-destination.ts).
 */
const SHUTDOWN_LIMIT_MS = 9_000;
/** After this, requests still in flight lose their connection so the database can close in time. */
const DRAIN_LIMIT_MS = 8_000;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** The dependencies and services of one app and its worker, on a real database with the system clock (serve and the CLI). */
export function depsFor(config: Config, storage: Storage): Deps {
  return buildDeps(config, storage, systemClock);
}

/**
 * Runs the service: migrate, make the first owner or a setup link, listen, and on SIGTERM or
 * SIGINT stop accepting, finish what is in flight and close the database within 10 s.
 * The caller (the CLI) has validated the configuration and prepared the data folder.
 */
export async function serve(config: Config): Promise<void> {
  const storage = await connectStorage(config.database, { poolSize: config.databasePoolSize, wakesOtherWorkers: !config.worker, checkPooler: true });
  const applied = await migrateStorage(storage);
  const deps = depsFor(config, storage);
  // Every exit from here on goes through destination.exit: a stdout nobody reads cannot hold it.
  const destination = logDestination();
  // A copy carrying the logger; its `services` is the very object the worker below gets (one hub, one sender).
  const app = await buildApp({ ...deps, logger: { stream: destination.stream } });
  const log = app.log;
  const exit = destination.exit;

  // From here on a crash is logged as one JSON line like everything else, then the process ends.
  process.on('uncaughtException', (error) => {
    log.fatal({ err: error }, 'uncaught exception; exiting');
    exit(1);
  });
  process.on('unhandledRejection', (reason) => {
    log.fatal({ err: reason }, 'unhandled promise rejection; exiting');
    exit(1);
  });

  if (applied.length > 0) log.info({ migrations: applied }, 'applied database migrations');
  // A process that serves no HTTP must not replace the setup token another process printed.
  const { created, setupToken } = config.api || config.owner ? await prepareFirstOwner(deps) : { created: null, setupToken: null };
  if (created) log.info({ personId: created.id, email: created.email }, 'created the first owner from PLAINBASE_OWNER_EMAIL');
  if (config.webhookAllowPrivate) {
    log.warn('PLAINBASE_WEBHOOK_ALLOW_PRIVATE is on: webhooks may call private and loopback addresses. Never run production like this.');
  }
  if (config.passwordHashCost < PASSWORD_HASH_COST) {
    log.warn(`PLAINBASE_TEST_PASSWORD_HASH_COST is ${config.passwordHashCost}: new password hashes are ${2 ** (PASSWORD_HASH_COST - config.passwordHashCost)} times cheaper to guess. For tests only; never run production like this.`);
  }
  // Loaded only when it runs: a process with PLAINBASE_WORKER=off holds none of its code.
  const worker = config.worker ? new (await import('./worker/delivery-worker.js')).DeliveryWorker(deps, { log, leaseMs: config.webhookClaimSeconds * 1000 }) : null;
  // Expired sessions, invites and idempotency answers go in the worker process, at start and then on a schedule.
  const housekeeper = config.worker ? new (await import('./worker/housekeeping.js')).Housekeeper(deps, log) : null;
  // Scheduled backups, in every worker process: each tick is taken by one of them (docs/backups.md).
  const backupSchedule = config.worker && config.backupSchedule ? new (await import('./worker/backup-schedule.js')).BackupSchedule(deps, config.backupSchedule, log) : null;

  let stopping = false;
  // A keep-alive connection would hold the shutdown open after its last answer; answers sent while
  // stopping tell the client to go, and connections that fall idle are closed as they do.
  // A callback hook, not an async one: it runs on every answer, and a promise per answer costs.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (stopping) reply.header('connection', 'close');
    done(null, payload);
  });
  const stop = async (signal: string) => {
    stopping = true;
    log.info({ signal }, 'shutting down: refusing new connections, finishing requests in flight');
    const reapIdle = setInterval(() => app.server.closeIdleConnections(), 100);
    reapIdle.unref();
    // Armed now, on the main thread, which nothing blocks: logging never waits for stdout.
    const hardLimit = setTimeout(() => {
      log.error('shutdown did not finish within 10 s; exiting anyway');
      exit(1);
    }, SHUTDOWN_LIMIT_MS);
    hardLimit.unref();
    const drainLimit = setTimeout(() => {
      log.warn('requests still in flight after 8 s; closing their connections');
      app.server.closeAllConnections();
    }, DRAIN_LIMIT_MS);
    drainLimit.unref();
    try {
      // Webhook attempts cut short here are not lost: their lease runs out and another round retries them.
      const workerStopped = worker ? Promise.race([worker.stop(), delay(DRAIN_LIMIT_MS)]) : null;
      const housekeeperStopped = housekeeper ? Promise.race([housekeeper.stop(), delay(DRAIN_LIMIT_MS)]) : null;
      // A backup cut short leaves no archive; its run is let go by the next claim (modules/backups/backup-runs.ts).
      const backupsStopped = backupSchedule ? Promise.race([backupSchedule.stop(), delay(DRAIN_LIMIT_MS)]) : null;
      await app.close();
      clearTimeout(drainLimit);
      clearInterval(reapIdle);
      await workerStopped;
      await housekeeperStopped;
      await backupsStopped;
      await closeServices(deps);
      await storage.close();
    } catch (error) {
      log.error({ err: error }, 'shutdown failed');
      exit(1);
    }
    log.info('stopped');
    exit(0);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (!stopping) return void stop(signal);
    // A second signal (Ctrl-C twice) means now.
    log.warn({ signal }, 'second signal: exiting without waiting');
    exit(1);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  const database = config.database.engine === 'sqlite' ? config.database.file : redactDatabaseUrl(config.database.url);
  if (config.api) {
    await app.listen({ port: config.port, host: config.host });
  } else {
    await app.ready();
    log.info('PLAINBASE_API is off: not serving HTTP');
  }
  worker?.start();
  housekeeper?.start();
  backupSchedule?.start();
  trimMemoryWhenIdle();
  log.info({ worker: worker !== null, engine: config.database.engine, database, publicUrl: config.publicUrl, env: config.env }, 'Plainbase is running');
  if (setupToken) {
    // Printed for the person at the terminal, not logged: the link is a credential, and log lines
    // are kept and shipped. It works once, and each start replaces it while nobody exists.
    process.stdout.write(
      `\nPlainbase has no owner yet. Create one with this one-time link:\n  ${config.publicUrl}/setup?token=${setupToken}\n` +
        `or from the command line: node bin/plainbase.js create-owner --email you@example.com --password '…'\n\n`,
    );
  }
}
