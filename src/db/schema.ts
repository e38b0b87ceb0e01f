import type { ColumnType, Kysely, Transaction } from 'kysely';
import type { RecordsTable } from './record-fields.js';

/**
 * Table shapes as Kysely sees them. Times are ISO 8601 text in UTC with milliseconds on both
 * engines, so they compare and sort the same everywhere; booleans are 0/1 integers.
 */
export interface PeopleTable {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  created_at: string;
}

export interface WorkspacesTable {
  id: string;
  name: string;
  created_at: string;
}

export interface MembershipsTable {
  workspace_id: string;
  person_id: string;
  role: string;
  joined_at: string;
}

export interface SessionsTable {
  token_hash: string;
  /** `ses_…`: names the session to its person (a list, ending one) without its secret. */
  id: string;
  person_id: string;
  created_at: string;
  expires_at: string;
  /** Updated at most once a minute (modules/sessions/sessions.ts); an idle session ends. */
  last_used_at: string;
  ip: string | null;
  user_agent: string | null;
}

export interface InvitesTable {
  id: string;
  workspace_id: string;
  email: string;
  role: string;
  token_hash: string;
  invited_by: string;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  accepted_by: string | null;
}

export interface AuditLogTable {
  id: string;
  workspace_id: string | null;
  at: string;
  actor_type: string;
  actor_id: string | null;
  actor_name: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  details: string;
}

export interface SignInThrottleTable {
  subject: string;
  failures: number;
  window_started_at: string;
  locked_until: string | null;
}

export interface SetupTokensTable {
  token_hash: string;
  created_at: string;
}

export interface CollectionsTable {
  id: string;
  workspace_id: string;
  name: string;
  public: number;
  /** JSON text. */
  settings: string;
  active_schema_version: number | null;
  /** JSON: the progress of building the search index (collections/search-settings.ts); null when built. */
  search_build: string | null;
  created_at: string;
  updated_at: string;
  trashed_at: string | null;
}

/** Defined with the rest of a record's shape, from which its reads and writes are made. */
export type { RecordsTable };

export interface SchemaVersionsTable {
  id: string;
  workspace_id: string;
  collection_id: string;
  version: number;
  state: string;
  /** JSON text of the JSON Schema. */
  schema: string;
  created_at: string;
}

export interface RecordIndexesTable {
  collection_id: string;
  workspace_id: string;
  name: string;
  /** JSON text: the indexed fields, like ["data.email"]. */
  fields: string;
  unique: number;
  /** The name of the database index behind it. */
  sql_name: string;
  created_at: string;
}

export interface EventsTable {
  id: string;
  workspace_id: string;
  collection_id: string;
  type: string;
  /** The message's `data` (docs/design.md §7) as JSON text; eventMessageText puts the message together. */
  data: string;
  created_at: string;
  /** Set once the worker has created this event's deliveries. */
  fanned_out_at: string | null;
  /** The event's place in the order events were fanned out (the event feed's order); null until then. */
  seq: number | null;
  /** The import that wrote the event (event_imports); null, and left out on insert, for ordinary writes. */
  import_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** An import whose events wait to be fanned out: visible from the import's commit (migration 0014). */
export interface EventImportsTable {
  id: string;
  workspace_id: string;
  created_at: string;
}

export interface IdempotencyKeysTable {
  workspace_id: string;
  caller_id: string;
  key: string;
  request_hash: string;
  status: number;
  body: string;
  created_at: string;
}

export interface ServiceAccountsTable {
  id: string;
  workspace_id: string;
  name: string;
  role: string;
  created_by: string;
  created_at: string;
  deleted_at: string | null;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  name: string;
  mode: string;
  /** A masked form of the token for lists, like `pb_live_01jd…a1b2`. */
  preview: string;
  /** JSON text: the granted scopes. */
  scopes: string;
  /** JSON text: the collection ids the key is restricted to, or null for all. */
  collections: string | null;
  expires_at: string | null;
  service_account_id: string | null;
  created_by: string;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
  last_used_ip: string | null;
}

export interface ApiKeySecretsTable {
  key_id: string;
  secret_hash: string;
  created_at: string;
  /** Null for the current secret; the end of the grace period for a rotated-out one. */
  expires_at: string | null;
}

export interface WebhooksTable {
  id: string;
  workspace_id: string;
  url: string;
  /** JSON text: event names, or ["*"] for all events, including ones added later. */
  events: string;
  /** JSON text: watched collection ids, or null for all. */
  collections: string | null;
  /** The signing secret. HMAC needs it in the clear; it is never shown after creation. */
  secret: string;
  enabled: number;
  disabled_reason: string | null;
  dead_streak: number;
  created_at: string;
  updated_at: string;
}

export interface DeliveriesTable {
  id: string;
  workspace_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  state: string;
  attempt_count: number;
  next_attempt_at: string | null;
  /** A worker's claim: nobody else attempts this delivery before then. */
  locked_until: string | null;
  created_at: string;
  updated_at: string;
}

export interface DeliveryAttemptsTable {
  id: string;
  delivery_id: string;
  workspace_id: string;
  /** The delivery's webhook (migration 0023; null only for an attempt logged before it). */
  webhook_id: string | null;
  at: string;
  status: number | null;
  duration_ms: number;
  /** JSON text. */
  response_headers: string;
  response_body: string;
  error: string | null;
}

export interface FilesTable {
  id: string;
  workspace_id: string;
  collection_id: string;
  name: string;
  size: number;
  content_type: string;
  /** Lowercase hex of the content's SHA-256; also the download's ETag. */
  sha256: string;
  /** Where the file store keeps the content. */
  storage_key: string;
  /** Who uploaded it: an actor type (person, key, …) and id. */
  created_by_type: string;
  created_by_id: string | null;
  created_at: string;
}

export interface RecordFilesTable {
  record_id: string;
  file_id: string;
  workspace_id: string;
  collection_id: string;
  attached_at: string;
}

/** Content the file store still holds for a file row that is gone. */
export interface FileDeletionsTable {
  storage_key: string;
  workspace_id: string;
  created_at: string;
}

/** Public submissions of one collection in one hour (modules/submissions/submission-counts.ts). */
/** One revision of a record as it was left by its change (modules/history/record-versions.ts). */
export interface RecordVersionsTable {
  workspace_id: string;
  collection_id: string;
  record_id: string;
  revision: number;
  /** jsonb on PostgreSQL (read back parsed), JSON text on SQLite, as records.data. */
  data: unknown;
  schema_version: number | null;
  change: string;
  changed_at: string;
  actor_type: string;
  actor_id: string | null;
  actor_name: string | null;
  request_id: string | null;
}

export interface SubmissionCountsTable {
  workspace_id: string;
  collection_id: string;
  /** The hour's start, as toISOString gives it. */
  hour: string;
  accepted: number;
  origin_not_allowed: number;
  rate_limited: number;
  captcha_failed: number;
  honeypot: number;
  too_large: number;
  invalid: number;
}

/** A backup the service takes or took (modules/backups/backup-runs.ts). */
export interface BackupRunsTable {
  /** The archive's name, `plainbase-<time>.tar`. */
  name: string;
  trigger: 'schedule' | 'request';
  /** 1 while the backup is written, null after: unique, so one runs at a time. */
  running: number | null;
  /** Who asked for it (a request), null for the schedule. */
  person_id: string | null;
  started_at: string;
  /** Moved on while it runs: a run whose process died stops counting as running. */
  alive_at: string;
  finished_at: string | null;
  failure: string | null;
}

export interface Database {
  backup_runs: BackupRunsTable;
  record_versions: RecordVersionsTable;
  submission_counts: SubmissionCountsTable;
  event_imports: EventImportsTable;
  webhooks: WebhooksTable;
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
  service_accounts: ServiceAccountsTable;
  api_keys: ApiKeysTable;
  api_key_secrets: ApiKeySecretsTable;
  collections: CollectionsTable;
  records: RecordsTable;
  files: FilesTable;
  record_files: RecordFilesTable;
  file_deletions: FileDeletionsTable;
  schema_versions: SchemaVersionsTable;
  record_indexes: RecordIndexesTable;
  events: EventsTable;
  idempotency_keys: IdempotencyKeysTable;
  people: PeopleTable;
  workspaces: WorkspacesTable;
  memberships: MembershipsTable;
  sessions: SessionsTable;
  invites: InvitesTable;
  audit_log: AuditLogTable;
  sign_in_throttle: SignInThrottleTable;
  setup_tokens: SetupTokensTable;
}

export type Db = Kysely<Database>;
/** Either the database or an open transaction: repositories accept both. */
export type Executor = Kysely<Database> | Transaction<Database>;
