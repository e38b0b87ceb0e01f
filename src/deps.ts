import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Storage } from './db/connect.js';
import type { Dialect } from './db/dialect.js';
import type { Db } from './db/schema.js';
import type { Services } from './services.js';

/** What every service needs, built once in main (or by a test) and passed down explicitly. */
export interface Deps {
  config: Config;
  db: Db;
  dialect: Dialect;
  clock: Clock;
  /** Resolves host names for webhook URL checks; tests inject one (default: the system resolver). */
  resolveHost?: (hostname: string) => Promise<string[]>;
  /** A consistent read-only view for long reads such as exports (Storage.openSnapshot). */
  openSnapshot: Storage['openSnapshot'];
  /** What this app shares with its own worker and with no other app (services.ts, made by build-services.ts). */
  services: Services;
}
