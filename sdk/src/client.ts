// What both entries export (index.ts for every runtime, browser.ts for browsers): all of the
// package but the webhook verifier, whose WebCrypto lookup differs between them.
export { Plainbase, Collection } from './plainbase.js';
export { PlainbaseError, type PlainbaseErrorCode, type SdkErrorCode } from './errors.js';
export { Records, RecordList, type BulkOptions, type ExportOptions, type ImportFormat, type ImportOptions, type ListOptions, type MergePatch, type PageOptions, type WriteOptions } from './records.js';
export { Submissions, type SubmissionReceipt, type SubmitOptions } from './submissions.js';
export { Events, type EventChoice, type EventListOptions, type SubscribeOptions, type Subscription } from './events.js';
export { Files, type DownloadOptions, type FileDownload, type UploadOptions } from './files.js';
export type { PlainbaseOptions } from './http.js';
export type { BodySource, OnProgress, Progress } from './request-body.js';
export type { AggregatePage, AggregateQuery, BulkDeleteResult, BulkUpdateResult, FileInfo, HttpMethod, ImportReport, Me, Operation, PathsWith, PlainbaseRecord, RecordPage, RequestOptions, SuccessBody } from './api-types.js';
export type { components, operations, paths } from './generated/openapi.js';
