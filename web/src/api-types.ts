import type { paths } from '@plainbase/openapi';

/**
 * The API's representations as the dashboard reads them, taken from the types generated off the
 * server's own OpenAPI document (sdk/src/generated/openapi.ts, `npm run generate` in sdk/), so a
 * route that changes its answer fails the dashboard's type check instead of drifting from it.
 */

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type ResponsesOf<O> = O extends { responses: infer Responses } ? Responses : never;
type JsonOf<R> = R extends { content: { 'application/json': infer Json } } ? Json : undefined;

/** The JSON body of an operation's successful answer. */
export type Answer<P extends keyof paths, M extends Method> = JsonOf<ResponsesOf<Operation<P, M>>[Extract<keyof ResponsesOf<Operation<P, M>>, 200 | 201 | 202>]>;

/** The JSON body an operation takes. */
export type RequestBody<P extends keyof paths, M extends Method> = Operation<P, M> extends { requestBody?: { content: { 'application/json': infer Body } } } ? Body : never;

/** One item of a paged list answer (`{ data: [...], nextCursor }`). */
type ItemOf<P extends keyof paths> = Answer<P, 'get'> extends { data: (infer Item)[] } ? Item : never;

// Data
export type Collection = Answer<'/v1/collections/{col}', 'get'>;
/** A collection of the list, with its record count when asked for (?counts=true). */
export type ListedCollection = ItemOf<'/v1/collections'>;
export type RecordItem = Answer<'/v1/collections/{col}/records/{rec}', 'get'>;
export type RecordData = RecordItem['data'];
/** One kept version of a record (its history, docs/history.md). */
export type RecordVersion = ItemOf<'/v1/collections/{col}/records/{rec}/versions'>;
export type SchemaVersion = ItemOf<'/v1/collections/{col}/schemas'>;
export type RecordIndex = ItemOf<'/v1/collections/{col}/indexes'>;
export type StoredFile = ItemOf<'/v1/collections/{col}/files'>;
/** How many stored records a schema version would refuse. */
export type SchemaCheck = Answer<'/v1/collections/{col}/schemas/{version}/check', 'get'>;
export type ImportReport = Answer<'/v1/collections/{col}/import', 'post'>;
/** Counts per group (`GET …/aggregate`). */
export type Aggregate = Answer<'/v1/collections/{col}/aggregate', 'get'>;
export type AggregateGroup = Aggregate['data'][number];
/** The answers of the changes by filter. */
export type BulkUpdateResult = Answer<'/v1/collections/{col}/records/bulk-update', 'post'>;
export type BulkDeleteResult = Answer<'/v1/collections/{col}/records/bulk-delete', 'post'>;

// People
/** What an invite link names before it is accepted. */
export type InvitePreview = Answer<'/v1/invites/{token}/accept', 'get'>;

// Keys and service accounts
export type ApiKey = ItemOf<'/v1/keys'>;
export type ApiKeyWithSecret = Answer<'/v1/keys', 'post'>;
export type ServiceAccount = ItemOf<'/v1/service-accounts'>;
/** Enough of a collection to pick it and to show its name. */
export type CollectionRef = Pick<Collection, 'id' | 'name'>;

// Webhooks
export type Webhook = ItemOf<'/v1/webhooks'>;
export type WebhookWithSecret = Answer<'/v1/webhooks', 'post'>;
/** What the webhook may be told to listen to, as the API takes it on create and change. */
export type WebhookInput = Pick<RequestBody<'/v1/webhooks', 'post'>, 'url' | 'events' | 'collections'>;
export type Delivery = ItemOf<'/v1/webhooks/{wh}/deliveries'>;
export type DeliveryWithAttempts = Answer<'/v1/webhooks/{wh}/deliveries/{dlv}', 'get'>;
export type Attempt = DeliveryWithAttempts['attempts'][number];
export type PingResult = Answer<'/v1/webhooks/{wh}/ping', 'post'>;
/** A webhook's health as the list and the webhook carry it; with 24 hourly counts from its own route. */
export type WebhookHealth = Webhook['health'];
export type WebhookHealthHours = Answer<'/v1/webhooks/{wh}/health', 'get'>;
export type RetryFailedResult = Answer<'/v1/webhooks/{wh}/retry-failed', 'post'>;

// People
export type Member = ItemOf<'/v1/members'>;
export type Invite = Answer<'/v1/invites', 'post'>;
export type AuditEntry = ItemOf<'/v1/audit-log'>;

// Session
export type SessionBody = Answer<'/v1/auth/session', 'get'>;
export type Person = SessionBody['person'];
export type Workspace = SessionBody['workspaces'][number];
/** One call to the receiver and how it answered; a ping's result has the same shape without id and time. */
export type AttemptResult = Omit<Attempt, 'id' | 'at'>;

// Public submissions (a collection's settings.submissions, and its counts per hour)
/** A collection's public submissions as the API shows them: the CAPTCHA's secret is never read back. */
export type SubmissionSettings = NonNullable<Collection['settings']['submissions']>;
/** What a change sends: a secret with the provider sets it, the provider alone keeps it, null removes the CAPTCHA. */
export type SubmissionSettingsInput = NonNullable<NonNullable<RequestBody<'/v1/collections/{col}', 'patch'>['settings']>['submissions']>;
/** Accepted and refused submissions of the last 24 hours, one entry an hour, oldest first. */
export type SubmissionCounts = Answer<'/v1/collections/{col}/submissions', 'get'>;
/** Why a submission was refused, as the counts name it. */
export type SubmissionRefusal = keyof SubmissionCounts['refusedBy'];

// Undo and backups
/** What `POST /v1/history/revert` takes: whose changes, since when (until when), in which collections, and whether only to count. */
export type RevertInput = RequestBody<'/v1/history/revert', 'post'>;
/** What a revert did (or, with dryRun, would do): counts per kind of change, and the records it left alone with why. */
export type RevertResult = Answer<'/v1/history/revert', 'post'>;
/** One backup archive the service keeps. */
export type Backup = ItemOf<'/v1/backups'>;
/** What `POST /v1/backups` answers: the name the archive will have; it is listed once written whole. */
export type BackupStarted = Answer<'/v1/backups', 'post'>;
