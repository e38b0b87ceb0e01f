import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Storage } from './db/connect.js';
import { LazyCaptchaClient } from './delivery/captcha-verify.js';
import { closeSender, LazySender } from './delivery/guard-options.js';
import type { Deps } from './deps.js';
import { noStreamSlots } from './http/routes/events/stream-slots.js';
import { noRechecks } from './http/routes/events/stream-rechecks.js';
import type { EventStream } from './http/routes/events/stream-events.js';
import { noRememberedCollections } from './modules/collections/remembered-collections.js';
import { EventHub } from './modules/events/event-hub.js';
import { noRememberedKeys } from './modules/keys/key-guess.js';
import type { Lane } from './modules/records/query/query-budget.js';
import { SubmissionCounts } from './modules/submissions/submission-counts.js';
import { SubmissionLimits } from './modules/submissions/submission-limits.js';
import { noSearchBuilds } from './modules/search/search-builds.js';
import type { Services } from './services.js';
import { SpoolQuota } from './spool-quota.js';
import { makeArchiveShelf } from './storage/archive-shelf.js';
import { closeFileStore, makeFileStore } from './storage/store-for.js';

/**
 * The one place that makes an app's services (services.ts) and the Deps that carry them. `serve`,
 * the CLI and the tests' harness all call it; whoever is given the result, the app and its delivery
 * worker, shares every service in it. Another call makes another set, as another process would have.
 * Nothing here opens a connection or loads a client: the sender and an S3 store load at first use.
 */
export function buildDeps(config: Config, storage: Pick<Storage, 'db' | 'dialect' | 'openSnapshot'>, clock: Clock): Deps {
  const deps = { config, db: storage.db, dialect: storage.dialect, clock, openSnapshot: storage.openSnapshot } as Deps;
  deps.services = buildServices(deps);
  return deps;
}

/** Every service, each new. `deps` is what the hub reads with and the sender checks URLs by. */
function buildServices(deps: Deps): Services {
  return {
    exportSpool: new SpoolQuota(),
    fileStore: makeFileStore(deps.config),
    archiveShelf: makeArchiveShelf(deps.config),
    webhookSender: new LazySender(deps),
    captchaClient: new LazyCaptchaClient(deps),
    eventHub: new EventHub(deps, { keepBytes: deps.config.streamHubBytes }),
    rememberedCollections: noRememberedCollections(),
    rememberedKeys: noRememberedKeys(),
    queryLanes: new Map<string, Lane>(),
    sequencedSinceStatistics: { count: 0 },
    streamSlots: noStreamSlots(),
    streamRechecks: noRechecks(),
    openStreams: new Set<EventStream>(),
    submissionCounts: new SubmissionCounts(),
    submissionLimits: new SubmissionLimits(),
    searchBuilds: noSearchBuilds(),
  };
}

/**
 * Closes what holds connections (the sender's pool, the CAPTCHA verifier's, the file store's), once the app and its worker
 * have both stopped: the app alone must not, or the worker's last attempts lose their connections.
 */
export async function closeServices(deps: Pick<Deps, 'services'>): Promise<void> {
  await Promise.all([closeSender(deps), deps.services.captchaClient.close(), closeFileStore(deps), deps.services.archiveShelf.close()]);
}
