import fs from 'node:fs';
import path from 'node:path';
import { Cron } from 'croner';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { browserOrigin } from './origin-list.js';
import { describePasswordProblem, passwordProblem } from './password-rules.js';

/**
 * Every setting of the service, read once from the environment at start (docs/design.md §8).
 * Nothing below this module reads `process.env`: the parsed `Config` is passed down.
 */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** A postgres:// URL, or a path to the SQLite file. */
  database: { engine: 'sqlite'; file: string } | { engine: 'postgres'; url: string; directUrl?: string };
  /** PostgreSQL connections this process may hold at once. */
  databasePoolSize: number;
  publicUrl: string;
  /**
   * Development without PLAINBASE_PUBLIC_URL: a request whose Origin is its own Host's is the
   * service's own too, so the dashboard works at http://localhost:PORT and http://127.0.0.1:PORT.
   */
  originFromHost: boolean;
  env: 'production' | 'development';
  api: boolean;
  worker: boolean;
  bodyLimitBytes: number;
  /** Largest body of POST …/import, in bytes (streamed, so it may be far above bodyLimitBytes). */
  importLimitBytes: number;
  /** Most records one import may bring in (PLAINBASE_IMPORT_MAX_RECORDS). */
  importMaxRecords: number;
  /** Most records one change by filter may change (PLAINBASE_BULK_MAX_RECORDS). */
  bulkMaxRecords: number;
  /** Largest page of a list in bytes: a page ends early, with a nextCursor, rather than pass it. */
  pageBytes: number;
  rateLimitPerKey: number;
  rateLimitPerIp: number;
  /** Time budget of each statement a caller's filter, sort or count shapes, in ms; queryTimeMs for callers with a credential, publicQueryTimeMs for anonymous ones. */
  queryTimeMs: number;
  publicQueryTimeMs: number;
  /**
   * Which proxies in front of the service are believed about the client's address
   * (X-Forwarded-For, -Host, -Proto): none (false), every one (true), the nearest `hops`, or those
   * at the listed addresses and ranges.
   */
  trustProxy: TrustProxy;
  /** Where the request and failed-authentication limits are counted, shared by every process; null: in each process. */
  redisUrl: string | null;
  /** Refused authentications allowed per address per minute before the address gets 429s; 0: no limit. */
  authFailuresPerIp: number;
  sessionTtlSeconds: number;
  /** A session unused this long ends; 0: never for want of use. */
  sessionIdleSeconds: number;
  /** How long a request's head (request line and headers) may take to arrive. */
  headersTimeoutMs: number;
  /** Each window this long must bring bodyMinBytesPerSecond × its length of the body (or the rest of it). */
  bodyTimeoutMs: number;
  bodyMinBytesPerSecond: number;
  /**
   * log2 of scrypt's N for new password hashes: 15 (N=2^15, 32 MiB; OWASP's minimum is 2^17 KiB).
   * Only tests lower it: in-process through testConfig, and in the service and CLI processes the
   * suite starts through PLAINBASE_TEST_PASSWORD_HASH_COST (logged as a warning at start).
   */
  passwordHashCost: number;
  /** Failed password checks per account (email) within signInLockSeconds before it is locked. */
  signInMaxFailures: number;
  /** Failed password checks per address within signInLockSeconds before it is locked: far above the account's. */
  signInMaxFailuresPerAddress: number;
  signInLockSeconds: number;
  /** Added wait per failed sign-in in a row (slows guessing before the lock). */
  signInSlowdownMs: number;
  keyPepper: string | null;
  owner: { email: string; password: string } | null;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Webhooks may target private and loopback addresses: for tests only, logged loudly at start. */
  webhookAllowPrivate: boolean;
  /** A PEM file of extra certificate authorities trusted for webhook HTTPS (besides the usual ones). */
  webhookCaFile: string | null;
  /** How long a delivery a worker claimed stays its own: after a crash, how soon another worker retries it. */
  webhookClaimSeconds: number;
  /** Most webhooks one workspace may hold. */
  webhooksPerWorkspace: number;
  /** Where public submissions' CAPTCHA tokens are verified, per provider (docs/forms.md). */
  captchaVerifyUrls: { turnstile: string; hcaptcha: string };
  /** How long one CAPTCHA verification may take before the submission is refused. */
  captchaTimeoutMs: number;
  /** Per-tenant limits on what a caller can create (docs/configuration.md, "Limits per tenant"). */
  workspacesPerPerson: number;
  apiKeysPerWorkspace: number;
  collectionsPerWorkspace: number;
  serviceAccountsPerWorkspace: number;
  indexesPerCollection: number;
  schemaVersionsPerCollection: number;
  /** Event streams one caller (key or person) may hold open in this process. */
  streamsPerCaller: number;
  /** Event streams this process holds open at once. */
  streamsPerProcess: number;
  /** Event streams one workspace may hold open in this process, over all its keys and people. */
  streamsPerWorkspace: number;
  /** Bytes of recent events the stream hub keeps in memory for the workspaces with an open stream. */
  streamHubBytes: number;
  /** Seconds a stream waits for its consumer to read the bytes waiting for it before closing it. */
  streamDrainSeconds: number;
  /** Largest file upload, in bytes. */
  fileMaxBytes: number;
  /** Origins whose pages may call the data API with an API key (CORS); `*` any; empty: none (src/http/cors.ts). */
  corsOrigins: string[];
  /** Public submissions one collection accepts per minute, over all addresses (besides each collection's per-address rate). */
  submissionsPerMinute: number;
  /** Largest body of an anonymous submission without files, in bytes. */
  submissionMaxBytes: number;
  /** Bytes of all the files of one anonymous submission together (multipart forms); each file is also held to fileMaxBytes. */
  submissionFileBytes: number;
  /** Days a record's earlier versions are kept (its newest stays while the record does). */
  historyDays: number;
  /** How long a shared cache may keep an anonymous read of a public collection, in seconds; 0: it must ask again each time. */
  publicMaxAgeSeconds: number;
  /** Bytes of exports one caller (key or person) / one workspace may have spooled on this process's disk at once. */
  exportSpoolBytesPerCaller: number;
  exportSpoolBytesPerWorkspace: number;
  /** A download of an export that takes nothing for this long is ended and its spool removed. */
  exportStallMs: number;
  /** When set, GET /metrics needs `Authorization: Bearer <it>`. */
  metricsToken: string | null;
  /** Where file content goes: an S3-compatible bucket, or null for the disk under the data folder. */
  s3: S3Settings | null;
  /** When the service takes a backup by itself: a five-field cron pattern read in UTC; null: never. */
  backupSchedule: string | null;
  /** Backups kept where they go (the newest); older ones are deleted after each new one. */
  backupKeep: number;
}

export type TrustProxy = boolean | { hops: number } | { addresses: string[] };

export interface S3Settings {
  /** null: AWS itself, found from the region. */
  endpoint: string | null;
  bucket: string;
  region: string;
  /** Both null: the AWS SDK's own credential chain (AWS_* variables, instance roles). */
  accessKeyId: string | null;
  secretAccessKey: string | null;
  forcePathStyle: boolean;
}

/** A bad setting: `message` is the one line printed before the process exits. */
export class ConfigError extends Error {
  constructor(readonly variable: string, detail: string) {
    super(`${variable}: ${detail}`);
  }
}

const onOff = (fallback: 'on' | 'off') =>
  z.enum(['on', 'off'], { error: 'must be on or off' }).default(fallback).transform((value) => value === 'on');

const flag = z
  .enum(['1', '0', 'on', 'off', 'true', 'false'], { error: 'must be 1 or 0' })
  .default('0')
  .transform((value) => value === '1' || value === 'on' || value === 'true');

const wholeNumber = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));

/** log2 of scrypt's N for the people's password hashes, and the lowest a test may ask for. */
export const PASSWORD_HASH_COST = 15;
const MIN_PASSWORD_HASH_COST = 10;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** proxy-addr's names for ranges, which Fastify's trustProxy accepts beside addresses and CIDRs. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** An IPv4 address in four decimal parts or an IPv6 address, alone or as a CIDR range (not ipaddr's looser `10` or `1.2.3`). */
function isAddressOrRange(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address = '', prefix] = entry.split('/', 2);
  const strict = ipaddr.IPv4.isValidFourPartDecimal(address) || ipaddr.IPv6.isValid(address);
  return strict && (prefix === undefined || ipaddr.isValidCIDR(entry));
}

const trustProxy = z.string().transform((value, context): TrustProxy => {
  const text = value.trim();
  if (text === 'true') return true;
  if (text === 'false') return false;
  const hops = /^\d+$/.test(text) ? Number(text) : null;
  if (hops !== null && hops >= 1 && hops <= 100) return { hops };
  const entries = text.split(',').map((entry) => entry.trim());
  const bad = hops === null ? entries.find((entry) => !isAddressOrRange(entry)) : text;
  if (bad === undefined) return { addresses: entries };
  context.addIssue({
    code: 'custom',
    message: `must be true, a number of proxies from 1 to 100, or a comma-separated list of proxy addresses and CIDR ranges such as 10.0.0.0/8,127.0.0.1${bad !== text ? ` (${JSON.stringify(bad)} is none of these)` : ''}`,
  });
  return z.NEVER;
});

/**
 * A cron pattern of five fields (minute hour day-of-month month day-of-week), or a nickname such
 * as @daily, read in UTC, that has a next time: checked at start so a typo is not a silent "never".
 */
const cronSchedule = z.string().transform((value, context): string => {
  const pattern = value.trim();
  let problem: string | null = null;
  if (!/\s/.test(pattern) && !pattern.startsWith('@')) problem = 'it is not a pattern';
  else {
    try {
      if (!new Cron(pattern, { timezone: 'UTC', mode: '5-part' }).nextRun()) problem = 'it never comes due';
    } catch (error) {
      problem = (error as Error).message.replace(/^CronPattern: /, '');
    }
  }
  if (problem === null) return pattern;
  context.addIssue({ code: 'custom', message: `must be a cron schedule of five fields (minute hour day month weekday, in UTC) such as "0 3 * * *", or @daily / @hourly (${problem})` });
  return z.NEVER;
});

/** Comma-separated origins as browsers send them (https://app.example.com), or `*`. */
const corsOrigins = z.string().transform((value, context): string[] => {
  const origins = value.split(',').map((entry) => entry.trim()).filter(Boolean);
  const bad = origins.find((origin) => origin !== '*' && browserOrigin(origin) === null);
  if (bad === undefined) return [...new Set(origins.map((origin) => origin.toLowerCase()))];
  context.addIssue({ code: 'custom', message: `must be a comma-separated list of origins such as https://app.example.com (scheme, host and port, no path), or * (${JSON.stringify(bad)} is not one)` });
  return z.NEVER;
});

const publicUrl = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.search === '' && url.hash === '' && url.username === '';
  } catch {
    return false;
  }
}, 'must be the http:// or https:// address people use to reach this service, such as https://data.example.com');

/** The providers' own verification endpoints (Cloudflare Turnstile, hCaptcha). */
const TURNSTILE_VERIFY_URL = 'https://challenges.cloudflare.com/turnstile/v0/siteverify';
const HCAPTCHA_VERIFY_URL = 'https://api.hcaptcha.com/siteverify';

// Checked again at every call by the outbound guard (https only outside development, no private addresses).
const verifyUrl = z.string().refine((value) => {
  const url = safeUrl(value);
  return url !== null && (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
}, 'must be an http:// or https:// URL without credentials');

/**
 * One entry per variable (the name after `PLAINBASE_`): its parser and its default as written in
 * the docs. What each means is said once, in the README's table, which test/config.test.ts checks
 * against this list.
 * `secret` values are never echoed in an error line.
 */
/** The fast paths PLAINBASE_SLOW_PATHS can turn off, for measuring (db/fast-paths.ts says what each is). */
export const FAST_PATHS = ['key-guess', 'remembered-collection', 'one-statement-create', 'group-commit'] as const;

export const VARIABLES = {
  PORT: { parse: wholeNumber(1, 65535).default(8080), default: '8080' },
  HOST: {
    parse: z.string().refine((value) => !value.includes('/') && !/\s/.test(value), 'must be a host name or an IP address, not a URL').default('127.0.0.1'),
    default: '127.0.0.1',
  },
  DATA_DIR: {
    parse: z.string().default('./data'),
    default: './data',
  },
  DATABASE_URL: {
    parse: z.string().optional(),
    default: '(SQLite in the data folder)',
    secret: true,
  },
  DATABASE_DIRECT_URL: {
    parse: z.string().optional(),
    default: '(none)',
    secret: true,
  },
  PUBLIC_URL: {
    parse: publicUrl.optional(),
    default: 'http://HOST:PORT',
  },
  ENV: {
    parse: z.enum(['production', 'development'], { error: 'must be production or development' }).default('production'),
    default: 'production',
  },
  API: {
    parse: onOff('on'),
    default: 'on',
  },
  WORKER: {
    parse: onOff('on'),
    default: 'on',
  },
  BODY_LIMIT: {
    parse: wholeNumber(1024, 1024 ** 3).default(1024 * 1024),
    default: '1048576',
  },
  IMPORT_LIMIT: {
    parse: wholeNumber(1024, 1024 ** 4).default(1024 ** 3),
    default: '1073741824',
  },
  IMPORT_MAX_RECORDS: {
    parse: wholeNumber(1, 1_000_000_000).default(1_000_000),
    default: '1000000',
  },
  BULK_MAX_RECORDS: {
    parse: wholeNumber(1, 10_000_000).default(100_000),
    default: '100000',
  },
  PAGE_BYTES: {
    parse: wholeNumber(64 * 1024, 1024 ** 3).default(16 * 1024 * 1024),
    default: '16777216',
  },
  DATABASE_POOL_SIZE: {
    parse: wholeNumber(1, 1000).default(10),
    default: '10',
  },
  RATE_LIMIT_PER_KEY: {
    parse: wholeNumber(0, 1_000_000).default(100),
    default: '100',
  },
  RATE_LIMIT_PER_IP: {
    parse: wholeNumber(0, 1_000_000).default(20),
    default: '20',
  },
  QUERY_TIME_MS: {
    parse: wholeNumber(1, 3_600_000).default(2000),
    default: '2000',
  },
  PUBLIC_QUERY_TIME_MS: {
    parse: wholeNumber(1, 3_600_000).default(500),
    default: '500',
  },
  TRUST_PROXY: {
    parse: trustProxy.optional(),
    default: '(none)',
  },
  REDIS_URL: {
    parse: z
      .string()
      .regex(/^rediss?:\/\/[^\s]+$/, 'must be a redis:// or rediss:// URL such as redis://127.0.0.1:6379')
      .optional(),
    default: '(none)',
    // It may hold a password.
    secret: true,
  },
  AUTH_FAILURES_PER_IP: {
    parse: wholeNumber(0, 1_000_000).default(30),
    default: '30',
  },
  SESSION_TTL_HOURS: {
    parse: wholeNumber(1, 24 * 365).default(24 * 7),
    default: '168',
  },
  SESSION_IDLE_MINUTES: {
    parse: wholeNumber(0, 525_600).default(4320),
    default: '4320',
  },
  HEADERS_TIMEOUT_SECONDS: {
    parse: wholeNumber(1, 3600).default(20),
    default: '20',
  },
  BODY_TIMEOUT_SECONDS: {
    parse: wholeNumber(1, 3600).default(10),
    default: '10',
  },
  BODY_MIN_BYTES_PER_SECOND: {
    parse: wholeNumber(0, 1024 ** 3).default(1024),
    default: '1024',
  },
  SIGN_IN_MAX_FAILURES: {
    parse: wholeNumber(1, 1000).default(5),
    default: '5',
  },
  SIGN_IN_MAX_FAILURES_PER_ADDRESS: {
    parse: wholeNumber(1, 1_000_000).default(100),
    default: '100',
  },
  SIGN_IN_LOCK_SECONDS: {
    parse: wholeNumber(1, 86_400).default(900),
    default: '900',
  },
  SIGN_IN_SLOWDOWN_MS: {
    parse: wholeNumber(0, 2000).default(250),
    default: '250',
  },
  KEY_PEPPER: {
    parse: z.string().min(32, 'must be at least 32 characters').optional(),
    default: '(none)',
    secret: true,
  },
  OWNER_EMAIL: {
    parse: z.email('must be an email address').optional(),
    default: '(none)',
  },
  OWNER_PASSWORD: {
    parse: z.string().min(10, 'must be at least 10 characters').optional(),
    default: '(none)',
    secret: true,
  },
  WEBHOOK_ALLOW_PRIVATE: {
    parse: flag,
    default: '0',
  },
  // Named for what it is for, so no one sets it for speed: a child process of the test suite
  // hashes at 2^10 (5 ms) instead of 2^15 (150 ms a sign-in). It can only lower the cost, never
  // below 2^10; test/passwords.test.ts checks that the default stays 15.
  TEST_PASSWORD_HASH_COST: {
    parse: wholeNumber(MIN_PASSWORD_HASH_COST, PASSWORD_HASH_COST).default(PASSWORD_HASH_COST),
    default: String(PASSWORD_HASH_COST),
  },
  WEBHOOK_CA_FILE: {
    parse: z.string().optional(),
    default: '(none)',
  },
  TURNSTILE_VERIFY_URL: {
    parse: verifyUrl.default(TURNSTILE_VERIFY_URL),
    default: TURNSTILE_VERIFY_URL,
  },
  HCAPTCHA_VERIFY_URL: {
    parse: verifyUrl.default(HCAPTCHA_VERIFY_URL),
    default: HCAPTCHA_VERIFY_URL,
  },
  CAPTCHA_TIMEOUT_MS: {
    parse: wholeNumber(100, 60_000).default(5000),
    default: '5000',
  },
  STREAMS_PER_CALLER: {
    parse: wholeNumber(1, 100_000).default(10),
    default: '10',
  },
  STREAMS_PER_PROCESS: {
    parse: wholeNumber(1, 1_000_000).default(1000),
    default: '1000',
  },
  STREAMS_PER_WORKSPACE: {
    parse: wholeNumber(1, 1_000_000).default(100),
    default: '100',
  },
  STREAM_HUB_BYTES: {
    parse: wholeNumber(0, 4 * 1024 ** 3).default(32 * 1024 * 1024),
    default: '33554432',
  },
  STREAM_DRAIN_SECONDS: {
    parse: wholeNumber(1, 3600).default(10),
    default: '10',
  },
  WEBHOOK_CLAIM_SECONDS: {
    // Longer than an attempt can take (10 s), so a live worker never loses a call it is making.
    parse: wholeNumber(15, 3600).default(60),
    default: '60',
  },
  WEBHOOKS_PER_WORKSPACE: {
    parse: wholeNumber(1, 100_000).default(50),
    default: '50',
  },
  WORKSPACES_PER_PERSON: {
    parse: wholeNumber(1, 100_000).default(20),
    default: '20',
  },
  API_KEYS_PER_WORKSPACE: {
    parse: wholeNumber(1, 1_000_000).default(500),
    default: '500',
  },
  COLLECTIONS_PER_WORKSPACE: {
    parse: wholeNumber(1, 1_000_000).default(500),
    default: '500',
  },
  SERVICE_ACCOUNTS_PER_WORKSPACE: {
    parse: wholeNumber(1, 100_000).default(100),
    default: '100',
  },
  INDEXES_PER_COLLECTION: {
    // Each is a real database index that every write to the collection keeps up to date.
    parse: wholeNumber(1, 1000).default(20),
    default: '20',
  },
  SCHEMA_VERSIONS_PER_COLLECTION: {
    parse: wholeNumber(1, 1_000_000).default(1000),
    default: '1000',
  },
  FILE_MAX_BYTES: {
    parse: wholeNumber(1, 5 * 1024 ** 4).default(5 * 1024 ** 3),
    default: '5368709120',
  },
  CORS_ORIGINS: {
    parse: corsOrigins.optional(),
    default: '(none)',
  },
  SUBMISSIONS_PER_MINUTE: {
    parse: wholeNumber(1, 1_000_000).default(600),
    default: '600',
  },
  SUBMISSION_MAX_BYTES: {
    parse: wholeNumber(1024, 1024 ** 3).default(64 * 1024),
    default: '65536',
  },
  SUBMISSION_MAX_FILE_BYTES: {
    parse: wholeNumber(0, 5 * 1024 ** 4).default(10 * 1024 ** 2),
    default: '10485760',
  },
  BACKUP_SCHEDULE: {
    parse: cronSchedule.optional(),
    default: '(none)',
  },
  BACKUP_KEEP: {
    parse: wholeNumber(1, 10_000).default(7),
    default: '7',
  },
  HISTORY_DAYS: {
    parse: wholeNumber(1, 36_500).default(30),
    default: '30',
  },
  PUBLIC_MAX_AGE: {
    parse: wholeNumber(0, 86_400).default(0),
    default: '0',
  },
  EXPORT_SPOOL_PER_CALLER: {
    parse: wholeNumber(1024 * 1024, 1024 ** 5).default(1024 ** 3),
    default: '1073741824',
  },
  EXPORT_SPOOL_PER_WORKSPACE: {
    parse: wholeNumber(1024 * 1024, 1024 ** 5).default(2 * 1024 ** 3),
    default: '2147483648',
  },
  EXPORT_STALL_SECONDS: {
    parse: wholeNumber(1, 3600).default(30),
    default: '30',
  },
  METRICS_TOKEN: {
    parse: z.string().min(16, 'must be at least 16 characters').regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces').optional(),
    default: '(none)',
    secret: true,
  },
  S3_BUCKET: {
    parse: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name (3 to 63 lower-case letters, digits, dots and hyphens)').optional(),
    default: '(none)',
  },
  S3_ENDPOINT: {
    parse: z.string().refine((value) => /^https?:$/.test(safeUrl(value)?.protocol ?? ''), 'must be an http:// or https:// URL').optional(),
    default: '(AWS)',
  },
  S3_REGION: {
    parse: z.string().regex(/^[a-z0-9-]{1,64}$/, 'must be a region name like eu-west-1').optional(),
    default: 'us-east-1',
  },
  S3_ACCESS_KEY_ID: {
    parse: z.string().optional(),
    default: '(none)',
  },
  S3_SECRET_ACCESS_KEY: {
    parse: z.string().optional(),
    default: '(none)',
    secret: true,
  },
  S3_FORCE_PATH_STYLE: {
    parse: flag,
    default: '0',
  },
  SLOW_PATHS: {
    // Read where the paths are chosen (db/fast-paths.ts); checked here so a typo is a clear start error.
    parse: z
      .string()
      .refine((value) => value.split(',').every((name) => name.trim() === '' || (FAST_PATHS as readonly string[]).includes(name.trim())), `must be a comma list of ${FAST_PATHS.join(', ')}`)
      .optional(),
    default: '(none)',
  },
  LOG_LEVEL: {
    parse: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
    default: 'info',
  },
} as const satisfies Record<string, { parse: z.ZodType; default: string; secret?: boolean }>;

type Name = keyof typeof VARIABLES;
type Values = { [K in Name]: z.output<(typeof VARIABLES)[K]['parse']> };

/**
 * Other PLAINBASE_* variables that are expected around the service but are not settings of it:
 * the CLI's and the test suite's own.
 */
const NOT_SETTINGS = /^PLAINBASE_(NEW_OWNER_PASSWORD|PASSWORD|KEY|LISTEN_SECRET|TEST_\w+)$/;

/** Parses the environment; throws ConfigError naming the first bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const raw = {} as Record<string, unknown>;
  for (const name of Object.keys(VARIABLES) as Name[]) {
    const spec: { parse: z.ZodType; secret?: boolean } = VARIABLES[name];
    const value = env[`PLAINBASE_${name}`];
    const result = spec.parse.safeParse(value === '' ? undefined : value);
    if (!result.success) {
      const problem = result.error.issues[0]?.message ?? 'is not valid';
      throw new ConfigError(`PLAINBASE_${name}`, spec.secret ? problem : `${problem} (got ${JSON.stringify(value)})`);
    }
    raw[name] = result.data;
  }
  const v = raw as Values;

  if ((v.OWNER_EMAIL === undefined) !== (v.OWNER_PASSWORD === undefined)) {
    const missing = v.OWNER_EMAIL === undefined ? 'PLAINBASE_OWNER_EMAIL' : 'PLAINBASE_OWNER_PASSWORD';
    throw new ConfigError(missing, 'must be set together with the other owner variable');
  }
  if (v.OWNER_EMAIL !== undefined && v.OWNER_PASSWORD !== undefined) {
    // The same rules as every new password (docs/security.md), checked before anything starts.
    const problem = passwordProblem(v.OWNER_PASSWORD, v.OWNER_EMAIL);
    if (problem) throw new ConfigError('PLAINBASE_OWNER_PASSWORD', describePasswordProblem(problem));
  }
  if (!v.API && !v.WORKER) throw new ConfigError('PLAINBASE_API', 'and PLAINBASE_WORKER are both off, so this process would have nothing to do');

  const dataDir = path.resolve(v.DATA_DIR);
  const s3 = s3Settings(v);
  return {
    port: v.PORT,
    host: v.HOST,
    dataDir,
    database: parseDatabase(v.DATABASE_URL, v.DATABASE_DIRECT_URL, dataDir),
    publicUrl: (v.PUBLIC_URL ?? `http://${v.HOST.includes(':') ? `[${v.HOST}]` : v.HOST}:${v.PORT}`).replace(/\/+$/, ''),
    originFromHost: v.PUBLIC_URL === undefined && v.ENV === 'development',
    env: v.ENV,
    api: v.API,
    worker: v.WORKER,
    bodyLimitBytes: v.BODY_LIMIT,
    importLimitBytes: v.IMPORT_LIMIT,
    importMaxRecords: v.IMPORT_MAX_RECORDS,
    bulkMaxRecords: v.BULK_MAX_RECORDS,
    pageBytes: v.PAGE_BYTES,
    databasePoolSize: v.DATABASE_POOL_SIZE,
    rateLimitPerKey: v.RATE_LIMIT_PER_KEY,
    rateLimitPerIp: v.RATE_LIMIT_PER_IP,
    queryTimeMs: v.QUERY_TIME_MS,
    publicQueryTimeMs: v.PUBLIC_QUERY_TIME_MS,
    trustProxy: v.TRUST_PROXY ?? false,
    redisUrl: v.REDIS_URL ?? null,
    authFailuresPerIp: v.AUTH_FAILURES_PER_IP,
    sessionTtlSeconds: v.SESSION_TTL_HOURS * 3600,
    sessionIdleSeconds: v.SESSION_IDLE_MINUTES * 60,
    headersTimeoutMs: v.HEADERS_TIMEOUT_SECONDS * 1000,
    bodyTimeoutMs: v.BODY_TIMEOUT_SECONDS * 1000,
    bodyMinBytesPerSecond: v.BODY_MIN_BYTES_PER_SECOND,
    passwordHashCost: v.TEST_PASSWORD_HASH_COST,
    signInMaxFailures: v.SIGN_IN_MAX_FAILURES,
    signInMaxFailuresPerAddress: v.SIGN_IN_MAX_FAILURES_PER_ADDRESS,
    signInLockSeconds: v.SIGN_IN_LOCK_SECONDS,
    signInSlowdownMs: v.SIGN_IN_SLOWDOWN_MS,
    keyPepper: v.KEY_PEPPER ?? null,
    owner: v.OWNER_EMAIL && v.OWNER_PASSWORD ? { email: v.OWNER_EMAIL, password: v.OWNER_PASSWORD } : null,
    logLevel: v.LOG_LEVEL,
    webhookAllowPrivate: v.WEBHOOK_ALLOW_PRIVATE,
    webhookCaFile: v.WEBHOOK_CA_FILE === undefined ? null : readCaFile(v.WEBHOOK_CA_FILE),
    webhookClaimSeconds: v.WEBHOOK_CLAIM_SECONDS,
    webhooksPerWorkspace: v.WEBHOOKS_PER_WORKSPACE,
    captchaVerifyUrls: { turnstile: v.TURNSTILE_VERIFY_URL, hcaptcha: v.HCAPTCHA_VERIFY_URL },
    captchaTimeoutMs: v.CAPTCHA_TIMEOUT_MS,
    workspacesPerPerson: v.WORKSPACES_PER_PERSON,
    apiKeysPerWorkspace: v.API_KEYS_PER_WORKSPACE,
    collectionsPerWorkspace: v.COLLECTIONS_PER_WORKSPACE,
    serviceAccountsPerWorkspace: v.SERVICE_ACCOUNTS_PER_WORKSPACE,
    indexesPerCollection: v.INDEXES_PER_COLLECTION,
    schemaVersionsPerCollection: v.SCHEMA_VERSIONS_PER_COLLECTION,
    streamsPerCaller: v.STREAMS_PER_CALLER,
    streamsPerProcess: v.STREAMS_PER_PROCESS,
    streamsPerWorkspace: v.STREAMS_PER_WORKSPACE,
    streamHubBytes: v.STREAM_HUB_BYTES,
    streamDrainSeconds: v.STREAM_DRAIN_SECONDS,
    fileMaxBytes: v.FILE_MAX_BYTES,
    corsOrigins: v.CORS_ORIGINS ?? [],
    submissionsPerMinute: v.SUBMISSIONS_PER_MINUTE,
    submissionMaxBytes: v.SUBMISSION_MAX_BYTES,
    submissionFileBytes: v.SUBMISSION_MAX_FILE_BYTES,
    historyDays: v.HISTORY_DAYS,
    publicMaxAgeSeconds: v.PUBLIC_MAX_AGE,
    exportSpoolBytesPerCaller: v.EXPORT_SPOOL_PER_CALLER,
    exportSpoolBytesPerWorkspace: v.EXPORT_SPOOL_PER_WORKSPACE,
    exportStallMs: v.EXPORT_STALL_SECONDS * 1000,
    metricsToken: v.METRICS_TOKEN ?? null,
    s3,
    backupSchedule: v.BACKUP_SCHEDULE ?? null,
    backupKeep: v.BACKUP_KEEP,
  };
}

function safeUrl(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

/** The S3 store is on when a bucket is named; S3 settings without one would silently do nothing. */
function s3Settings(v: Values): S3Settings | null {
  if (v.S3_BUCKET === undefined) {
    const stray = (['S3_ENDPOINT', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const).find((name) => v[name] !== undefined);
    if (stray) throw new ConfigError('PLAINBASE_S3_BUCKET', `must be set to keep files in S3 (PLAINBASE_${stray} is set)`);
    return null;
  }
  if ((v.S3_ACCESS_KEY_ID === undefined) !== (v.S3_SECRET_ACCESS_KEY === undefined)) {
    const missing = v.S3_ACCESS_KEY_ID === undefined ? 'PLAINBASE_S3_ACCESS_KEY_ID' : 'PLAINBASE_S3_SECRET_ACCESS_KEY';
    throw new ConfigError(missing, 'must be set together with the other S3 credential');
  }
  return {
    endpoint: v.S3_ENDPOINT?.replace(/\/+$/, '') ?? null,
    bucket: v.S3_BUCKET,
    region: v.S3_REGION ?? 'us-east-1',
    accessKeyId: v.S3_ACCESS_KEY_ID ?? null,
    secretAccessKey: v.S3_SECRET_ACCESS_KEY ?? null,
    forcePathStyle: v.S3_FORCE_PATH_STYLE,
  };
}

/** The CA file is read at every sender start; a wrong path should stop the start, not the first webhook. */
function readCaFile(file: string): string {
  const resolved = path.resolve(file);
  let text: string;
  try {
    text = fs.readFileSync(resolved, 'utf8');
  } catch (error) {
    throw new ConfigError('PLAINBASE_WEBHOOK_CA_FILE', `cannot read ${resolved} (${describeFsError(error)})`);
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError('PLAINBASE_WEBHOOK_CA_FILE', `${resolved} holds no PEM certificate`);
  return resolved;
}

/** PLAINBASE_* variables that are set but mean nothing here: most likely a typo worth a warning. */
export function unknownVariables(env: NodeJS.ProcessEnv): string[] {
  const known = new Set(Object.keys(VARIABLES).map((name) => `PLAINBASE_${name}`));
  return Object.keys(env).filter((name) => name.startsWith('PLAINBASE_') && !known.has(name) && !NOT_SETTINGS.test(name)).sort();
}

function parseDatabase(url: string | undefined, directUrl: string | undefined, dataDir: string): Config['database'] {
  const database = parseDatabaseUrl(url, dataDir);
  if (directUrl === undefined || directUrl === '') return database;
  if (database.engine !== 'postgres') throw new ConfigError('PLAINBASE_DATABASE_DIRECT_URL', 'is for PostgreSQL only, and PLAINBASE_DATABASE_URL is not a postgres:// URL');
  if (!/^postgres(ql)?:/i.test(directUrl)) throw new ConfigError('PLAINBASE_DATABASE_DIRECT_URL', 'must start with postgres://');
  try {
    new URL(directUrl);
  } catch {
    throw new ConfigError('PLAINBASE_DATABASE_DIRECT_URL', `is not a valid URL (got ${redactDatabaseUrl(directUrl)}); expected postgres://user:password@host:5432/database`);
  }
  return { ...database, directUrl };
}

function parseDatabaseUrl(url: string | undefined, dataDir: string): Config['database'] {
  if (url === undefined) return { engine: 'sqlite', file: path.join(dataDir, 'plainbase.db') };
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (file === '') throw new ConfigError('PLAINBASE_DATABASE_URL', 'names no file after sqlite: (use sqlite:/path/to/plainbase.db)');
    return { engine: 'sqlite', file: file === ':memory:' ? file : path.resolve(file) };
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1];
  if (scheme === 'postgres' || scheme === 'postgresql') {
    try {
      new URL(url);
    } catch {
      throw new ConfigError('PLAINBASE_DATABASE_URL', `is not a valid URL (got ${redactDatabaseUrl(url)}); expected postgres://user:password@host:5432/database`);
    }
    return { engine: 'postgres', url };
  }
  const got = scheme ? `"${scheme}:"` : 'no scheme';
  throw new ConfigError('PLAINBASE_DATABASE_URL', `must start with postgres:// or sqlite: (got ${got})`);
}

/** A database URL fit for logs and error lines: the password is hidden. */
export function redactDatabaseUrl(url: string): string {
  return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@').replace(/([?&]password=)[^&]*/i, '$1***');
}

/**
 * Makes sure the folder of the SQLite file exists and takes a file, naming the variable to fix
 * when it does not. Runs at start, before the database opens. (PostgreSQL needs no folder: a
 * deployment on it may run with a read-only disk.)
 */
export function prepareDirectories(config: Config): void {
  if (config.database.engine !== 'sqlite' || config.database.file === ':memory:') return;
  const folder = path.dirname(config.database.file);
  // The default file lives in the data folder; any other folder came from PLAINBASE_DATABASE_URL.
  ensureWritableDir(folder, isInside(folder, config.dataDir) ? 'PLAINBASE_DATA_DIR' : 'PLAINBASE_DATABASE_URL');
}

function isInside(folder: string, parent: string): boolean {
  const relative = path.relative(parent, folder);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * Creates `dir` level by level and proves a file can be written in it. Level by level, because
 * `fs.mkdirSync(dir, { recursive: true })` spins forever under /proc on Node 20.
 */
export function ensureWritableDir(dir: string, variable: string): void {
  const missing: string[] = [];
  let existing = path.resolve(dir);
  for (;;) {
    const stat = statOrNull(existing);
    if (stat) {
      if (!stat.isDirectory()) {
        throw new ConfigError(variable, existing === path.resolve(dir) ? `${dir} is a file, not a folder` : `cannot create ${dir}: ${existing} is a file, not a folder`);
      }
      break;
    }
    missing.unshift(existing);
    const parent = path.dirname(existing);
    if (parent === existing) break;
    existing = parent;
  }
  try {
    // Only the service's own user may enter what it creates: the database and files are inside.
    for (const level of missing) fs.mkdirSync(level, { mode: 0o700 });
  } catch (error) {
    throw new ConfigError(variable, `cannot create the folder ${dir} (${describeFsError(error)})`);
  }
  const probe = path.join(dir, `.plainbase-write-check-${process.pid}`);
  try {
    fs.writeFileSync(probe, '');
    fs.unlinkSync(probe);
  } catch (error) {
    throw new ConfigError(variable, `cannot write in the folder ${dir} (${describeFsError(error)})`);
  }
}

function statOrNull(file: string): fs.Stats | null {
  try {
    return fs.statSync(file);
  } catch {
    return null;
  }
}

function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const reasons: Record<string, string> = {
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EROFS: 'read-only file system',
    ENOENT: 'the parent folder does not accept new folders',
    ENOSPC: 'no space left on the device',
    ENOTDIR: 'a part of the path is a file',
  };
  return (code && reasons[code]) ?? (error as Error).message;
}
