import type { SpoolQuota } from './spool-quota.js';

/**
 * What one running app and its delivery worker share, and another app (another process, or a
 * second app a test starts beside the first) never does: the file store, the webhook sender, the
 * event hub, the caches and counters that live in memory. It is one plain object made by
 * buildServices (build-services.ts) and reached as `deps.services`; whatever holds the same
 * object shares them, whatever holds another does not. Nothing of this kind lives in a module
 * variable or a map keyed by the Deps object, so copying Deps (`{ ...deps, logger }`) keeps them.
 *
 * Each field is declared next to the code that owns it, in that module (`declare module
 * '…/services.js'`), so this file imports nothing above it; build-services.ts is where every one
 * is made, and the compiler refuses a field it forgets.
 */
export interface Services {
  /** Bytes of exports spooled on this process's disk, per caller and per workspace. */
  exportSpool: SpoolQuota;
}
